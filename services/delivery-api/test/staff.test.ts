/**
 * Staff identities on the operator API: the people and their roles, their tokens (shown once,
 * revoked at once, expiring), personal tokens, who a token is (/staff/me), and the guard against
 * made-up tokens. Real PostgreSQL and NATS; tokens go through the same bearer header as a CLI.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { sql } from "kysely";
import { OPS_TOKEN, startTestApi, type TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient, TIMESTAMP } from "./ops-client.ts";
import { createTestStaff } from "./staff-fixtures.ts";

const STAFF_TOKEN = /^dos_staff_[A-Za-z0-9_-]{43}$/;
const REQUIRED = { errors: ["Authorization: Bearer <operator token> is required"] };

describe("staff identities", () => {
  let api: TestApi;
  let ops: OpsClient;
  before(async () => {
    api = await startTestApi();
    ops = opsClient(api);
  });
  after(async () => api.close());

  test("/staff/me tells automation from a person", async () => {
    assert.deepEqual((await ops.get("/staff/me")).body, {
      kind: "automation",
      id: null,
      email: null,
      name: "automation",
      role: "admin",
    });
    const ada = await createTestStaff(api, "dispatcher", "Ada Lovelace");
    const me = await ada.ops.get("/staff/me");
    assert.equal(me.status, 200);
    assert.deepEqual(me.body, {
      kind: "staff",
      id: ada.id,
      email: ada.email,
      name: "Ada Lovelace",
      role: "dispatcher",
    });
  });

  test("create a person: e-mail lower-cased and unique whatever its case (409), every field checked (422)", async () => {
    const created = await ops.post("/staff", {
      email: "Grace.Hopper@Operator.Example",
      name: " Grace ",
      role: "admin",
    });
    assert.equal(created.status, 201);
    assert.match(created.body.created_at, TIMESTAMP);
    assert.deepEqual(
      { ...created.body, created_at: undefined },
      {
        id: created.body.id,
        email: "grace.hopper@operator.example",
        name: "Grace",
        role: "admin",
        disabled: false,
        created_at: undefined,
      },
    );
    const again = await ops.post("/staff", { email: "GRACE.HOPPER@operator.example", name: "G", role: "read_only" });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, {
      errors: ["email grace.hopper@operator.example is already used by another staff member"],
    });

    const bad = await ops.post("/staff", { email: "not-an-email", name: "", role: "owner" });
    assert.equal(bad.status, 422);
    assert.ok(
      bad.body.errors.some((m: string) => m.startsWith("email ")),
      bad.body.errors,
    );
    assert.ok(
      bad.body.errors.some((m: string) => m.startsWith("role ")),
      bad.body.errors,
    );
    const blank = await ops.post("/staff", { email: "blank@operator.example", name: "   ", role: "admin" });
    assert.deepEqual([blank.status, blank.body], [422, { errors: ["name must not be blank"] }]);
    // A huge name is refused by its size alone, naming the field; a huge body before it is read.
    const huge = await ops.post("/staff", { email: "huge@operator.example", name: "x".repeat(100_000), role: "admin" });
    assert.deepEqual([huge.status, huge.body], [422, { errors: ["name must be at most 255 characters"] }]);
    const tooLarge = await ops.post("/staff", {
      email: "huge@operator.example",
      name: "x".repeat(300_000),
      role: "admin",
    });
    assert.equal(tooLarge.status, 413);
  });

  test("list by id in pages, find by e-mail, show one; unknown ids are 404", async () => {
    for (let i = 0; i < 3; i++) await createTestStaff(api, "read_only");
    const first = await ops.get("/staff?per_page=2");
    assert.equal(first.status, 200);
    assert.equal(first.body.staff.length, 2);
    assert.match(String(first.headers.link), /^<\/ops\/v1\/staff\?per_page=2&page=2>; rel="next"$/);
    const ids = first.body.staff.map((s: { id: number }) => s.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );

    const someone = await createTestStaff(api, "dispatcher");
    const found = await ops.get(`/staff?email=${encodeURIComponent(someone.email.toUpperCase())}`);
    assert.deepEqual(
      found.body.staff.map((s: { id: number }) => s.id),
      [someone.id],
    );
    assert.equal(found.headers.link, undefined);
    assert.deepEqual((await ops.get("/staff?email=nobody@operator.example")).body, { staff: [] });
    assert.equal((await ops.get(`/staff/${someone.id}`)).body.email, someone.email);
    assert.deepEqual((await ops.get("/staff/999999999")).body, { errors: ["staff 999999999 not found"] });
    assert.equal((await ops.get("/staff/abc")).status, 404);
    assert.equal((await ops.get("/staff?per_page=501")).status, 422);
  });

  test("a token works at once, is listed without its secret, and a revoked one is a 401 at the next request", async () => {
    const bob = await createTestStaff(api, "read_only");
    const minted = await ops.post(`/staff/${bob.id}/tokens`, { label: "console session 7" });
    assert.equal(minted.status, 201);
    assert.equal(minted.headers["cache-control"], "no-store");
    assert.match(minted.body.token, STAFF_TOKEN);
    assert.deepEqual(Object.keys(minted.body).sort(), ["created_at", "expires_at", "id", "label", "token"]);
    const session = opsClient(api, minted.body.token);
    assert.equal((await session.get("/vehicles")).status, 200);

    const listed = await ops.get(`/staff/${bob.id}/tokens`);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.tokens.map((t: { label: string }) => t.label),
      ["test", "console session 7"],
    );
    assert.ok(!JSON.stringify(listed.body).includes(minted.body.token));
    for (const token of listed.body.tokens) {
      assert.deepEqual(Object.keys(token).sort(), ["created_at", "expires_at", "id", "label", "last_used_at"]);
    }
    // Used once already: its last use is written (at the lookup, in the background).
    await waitFor(async () => {
      const tokens = (await ops.get(`/staff/${bob.id}/tokens`)).body.tokens;
      return tokens.find((t: { id: number }) => t.id === minted.body.id)?.last_used_at !== null;
    }, 5000);

    const revoked = await ops.delete(`/staff/${bob.id}/tokens/${minted.body.id}`);
    assert.equal(revoked.status, 204);
    const refused = await session.get("/vehicles");
    assert.deepEqual([refused.status, refused.body], [401, REQUIRED]);
    assert.equal((await ops.delete(`/staff/${bob.id}/tokens/${minted.body.id}`)).status, 404);
    assert.deepEqual(
      (await ops.get(`/staff/${bob.id}/tokens`)).body.tokens.map((t: { label: string }) => t.label),
      ["test"],
    );
    // Bob's other token is untouched.
    assert.equal((await bob.ops.get("/vehicles")).status, 200);
  });

  test("another person's token cannot be revoked through the wrong person or the caller's own tokens", async () => {
    const alice = await createTestStaff(api, "dispatcher");
    const mallory = await createTestStaff(api, "dispatcher");
    const aliceToken = (await ops.get(`/staff/${alice.id}/tokens`)).body.tokens[0].id;
    assert.deepEqual((await ops.delete(`/staff/${mallory.id}/tokens/${aliceToken}`)).body, {
      errors: [`token ${aliceToken} not found`],
    });
    assert.equal((await mallory.ops.delete(`/staff/me/tokens/${aliceToken}`)).status, 404);
    assert.equal((await mallory.ops.delete(`/staff/${alice.id}/tokens/${aliceToken}`)).status, 403);
    assert.equal((await mallory.ops.get(`/staff/${alice.id}/tokens`)).status, 403);
    assert.equal((await alice.ops.get("/staff/me")).status, 200);
  });

  test("personal tokens: any role mints, lists and revokes its own; automation has none", async () => {
    const viewer = await createTestStaff(api, "read_only");
    const minted = await viewer.ops.post("/staff/me/tokens", { label: "laptop CLI" });
    assert.equal(minted.status, 201);
    assert.equal(minted.headers["cache-control"], "no-store");
    const cli = opsClient(api, minted.body.token);
    assert.equal((await cli.get("/staff/me")).body.id, viewer.id);
    assert.deepEqual(
      (await cli.get("/staff/me/tokens")).body.tokens.map((t: { label: string }) => t.label),
      ["test", "laptop CLI"],
    );
    assert.equal((await viewer.ops.delete(`/staff/me/tokens/${minted.body.id}`)).status, 204);
    assert.equal((await cli.get("/staff/me")).status, 401);

    const automation = await ops.post("/staff/me/tokens", { label: "x" });
    assert.deepEqual(
      [automation.status, automation.body],
      [403, { errors: ["automation may not POST /ops/v1/staff/me/tokens: personal tokens belong to a person"] }],
    );
    assert.equal((await ops.get("/staff/me/tokens")).status, 403);

    // A huge label is refused by its size, naming the field; nothing is minted.
    const huge = await viewer.ops.post("/staff/me/tokens", { label: "l".repeat(200_000) });
    assert.deepEqual([huge.status, huge.body], [422, { errors: ["label must be at most 255 characters"] }]);
    const blank = await viewer.ops.post("/staff/me/tokens", { label: " " });
    assert.deepEqual([blank.status, blank.body], [422, { errors: ["label must not be blank"] }]);
    assert.equal((await viewer.ops.get("/staff/me/tokens")).body.tokens.length, 1);
  });

  test("a token given an expiry works until then and is refused after it; a past expiry is refused", async () => {
    const carol = await createTestStaff(api, "read_only");
    const past = await ops.post(`/staff/${carol.id}/tokens`, { label: "old", expires_at: "2020-01-01T00:00:00Z" });
    assert.deepEqual([past.status, past.body], [422, { errors: ["expires_at must be in the future"] }]);
    const badDate = await ops.post(`/staff/${carol.id}/tokens`, { label: "x", expires_at: "2030-02-30T00:00:00Z" });
    assert.deepEqual([badDate.status, badDate.body], [422, { errors: ["expires_at is not a valid date and time"] }]);

    const expiresAt = new Date(Date.now() + 1500);
    const minted = await ops.post(`/staff/${carol.id}/tokens`, { label: "short", expires_at: expiresAt.toISOString() });
    assert.equal(minted.status, 201);
    const shortLived = opsClient(api, minted.body.token);
    assert.equal((await shortLived.get("/staff/me")).status, 200);
    // The login is cached (API_AUTH_CACHE_MS, 5 s here): the cache must not outlive the token.
    await waitFor(async () => (await shortLived.get("/staff/me")).status === 401, 10_000, "the token expired");
    assert.ok(Date.now() >= expiresAt.getTime());
    assert.ok(
      !(await ops.get(`/staff/${carol.id}/tokens`)).body.tokens.some((t: { id: number }) => t.id === minted.body.id),
    );
  });

  test("a role change applies to the person's next request; disabling revokes every token (401), enabling does not revive them", async () => {
    const dan = await createTestStaff(api, "read_only");
    const second = (await ops.post(`/staff/${dan.id}/tokens`, { label: "second" })).body.token;
    assert.equal((await dan.ops.post("/messengers", { name: "Paul" })).status, 403);
    const promoted = await ops.patch(`/staff/${dan.id}`, { role: "dispatcher", name: "Dan D." });
    assert.deepEqual([promoted.body.role, promoted.body.name], ["dispatcher", "Dan D."]);
    assert.equal((await dan.ops.post("/messengers", { name: "Paul" })).status, 201);
    assert.equal((await dan.ops.get("/staff/me")).body.name, "Dan D.");

    const disabled = await ops.patch(`/staff/${dan.id}`, { disabled: true });
    assert.equal(disabled.body.disabled, true);
    for (const token of [dan.token, second]) {
      const refused = await opsClient(api, token).get("/staff/me");
      assert.deepEqual([refused.status, refused.body], [401, REQUIRED]);
    }
    const rows = await api.db.selectFrom("staff_tokens").select("revoked_at").where("staff_id", "=", dan.id).execute();
    assert.ok(rows.length === 2 && rows.every((row) => row.revoked_at !== null));
    const cannotMint = await ops.post(`/staff/${dan.id}/tokens`, { label: "x" });
    assert.deepEqual(
      [cannotMint.status, cannotMint.body],
      [422, { errors: [`staff ${dan.id} is disabled; enable the person first`] }],
    );

    await ops.patch(`/staff/${dan.id}`, { disabled: false });
    assert.equal((await dan.ops.get("/staff/me")).status, 401);
    const fresh = (await ops.post(`/staff/${dan.id}/tokens`, { label: "after" })).body.token;
    assert.equal((await opsClient(api, fresh).get("/staff/me")).status, 200);
    assert.equal((await ops.patch(`/staff/${dan.id}`, { role: "owner" })).status, 422);
    assert.equal((await ops.patch("/staff/999999999", { name: "x" })).status, 404);
  });

  test("a person disabled through another replica is refused here within API_AUTH_CACHE_MS", async () => {
    const cached = await startTestApi({ API_AUTH_CACHE_MS: "300" });
    try {
      const erin = await createTestStaff(cached, "read_only");
      assert.equal((await erin.ops.get("/staff/me")).status, 200);
      // Straight in the database, as another replica's operator API would.
      await cached.db.updateTable("staff").set({ disabled: true }).where("id", "=", erin.id).execute();
      await waitFor(async () => (await erin.ops.get("/staff/me")).status === 401, 5000);
    } finally {
      await cached.close();
    }
  });

  test("10,000 tokens of one person are listed in bounded pages", async () => {
    const frank = await createTestStaff(api, "read_only");
    await sql`
      insert into staff_tokens (staff_id, label, token_sha256)
      select ${frank.id}::bigint, 'bulk ' || n, sha256(convert_to('t' || ${frank.id}::bigint || '-' || n, 'UTF8'))
      from generate_series(1, 10000) as n
    `.execute(api.db);
    const started = performance.now();
    const page = await ops.get(`/staff/${frank.id}/tokens`);
    const firstMs = performance.now() - started;
    assert.equal(page.body.tokens.length, 100);
    assert.equal(page.headers.link, `</ops/v1/staff/${frank.id}/tokens?page=2&per_page=100>; rel="next"`);
    const widest = await ops.get(`/staff/${frank.id}/tokens?per_page=500&page=21`);
    assert.equal(widest.body.tokens.length, 1);
    assert.equal(widest.headers.link, undefined);
    const tooWide = await ops.get(`/staff/${frank.id}/tokens?per_page=10000`);
    assert.deepEqual([tooWide.status, tooWide.body], [422, { errors: ["querystring.per_page must be at most 500"] }]);
    const tooDeep = await ops.get(`/staff/${frank.id}/tokens?page=10001`);
    assert.deepEqual([tooDeep.status, tooDeep.body], [422, { errors: ["querystring.page must be at most 10000"] }]);
    process.stdout.write(`# first page of 10,000 tokens: ${firstMs.toFixed(1)} ms\n`);
  });

  test("a person holds 100 live tokens at most: the next is a 409 until one is revoked or expires", async () => {
    const gina = await createTestStaff(api, "dispatcher");
    // Besides the token the fixture minted: 97 straight into the table, one expired and one
    // revoked (neither counts), then two minted through the API.
    await sql`
      insert into staff_tokens (staff_id, label, token_sha256, expires_at, revoked_at)
      select ${gina.id}::bigint, 'bulk ' || n, sha256(convert_to('g' || ${gina.id}::bigint || '-' || n, 'UTF8')),
        case when n = 98 then now() - interval '1 minute' end, case when n = 99 then now() end
      from generate_series(1, 99) as n
    `.execute(api.db);
    for (const label of ["99th", "100th"]) {
      assert.equal((await ops.post(`/staff/${gina.id}/tokens`, { label })).status, 201);
    }
    const refused = await ops.post(`/staff/${gina.id}/tokens`, { label: "101st" });
    assert.deepEqual(
      [refused.status, refused.body],
      [409, { errors: [`staff ${gina.id} holds 100 live tokens, the most a person may; revoke one first`] }],
    );
    const own = await gina.ops.post("/staff/me/tokens", { label: "laptop" });
    assert.equal(own.status, 409, "the person's own tokens count too");
    const bulk = (await ops.get(`/staff/${gina.id}/tokens?per_page=1&page=2`)).body.tokens[0];
    assert.equal(bulk.label, "bulk 1");
    assert.equal((await ops.delete(`/staff/${gina.id}/tokens/${bulk.id}`)).status, 204);
    assert.equal((await gina.ops.post("/staff/me/tokens", { label: "laptop" })).status, 201);
  });

  describe("made-up tokens", () => {
    const FAILURES = 5;
    let guarded: TestApi;
    before(async () => {
      guarded = await startTestApi({
        API_AUTH_FAILURE_QUOTA: String(FAILURES),
        API_AUTH_FAILURE_WINDOW_SECONDS: "3600",
        API_AUTH_CACHE_MS: "0",
        TRUSTED_PROXIES: "loopback",
      });
      await guarded.start();
    });
    after(async () => guarded.close());

    const lookups = async () => {
      const text = (await guarded.app.inject({ method: "GET", url: "/metrics" })).body;
      return Number(/^ops_staff_token_lookups_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? "0");
    };
    const call = (token: string, address: string) =>
      guarded.app.inject({
        method: "GET",
        url: "/ops/v1/staff/me",
        headers: { authorization: `Bearer ${token}`, "x-forwarded-for": address },
      });

    test("a flood of wrong tokens costs at most the budget in lookups; automation and a real person still get in", async () => {
      const real = await createTestStaff(guarded, "read_only");
      const attacker = "203.0.113.9";
      const before = await lookups();
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        statuses.push((await call(`dos_staff_${randomBytes(32).toString("base64url")}`, attacker)).statusCode);
        if (i % 50 === 0) {
          assert.equal((await call(real.token, attacker)).statusCode, 200);
          assert.equal((await call(OPS_TOKEN, attacker)).statusCode, 200);
        }
      }
      assert.deepEqual(statuses.slice(0, FAILURES), Array(FAILURES).fill(401));
      assert.deepEqual(new Set(statuses.slice(FAILURES)), new Set([429]));
      // Made-up tokens were looked up only until the budget was spent; the real person's 4 requests were.
      assert.equal((await lookups()) - before, FAILURES + 4);
      const refused = await call("not-a-token-at-all", attacker);
      assert.equal(refused.statusCode, 429);
      assert.ok(Number(refused.headers["retry-after"]) >= 1);
      assert.match(refused.json().errors[0], /^too many failed authentications from this address; retry after \d+ s$/);
      // Another address's first failure is a plain 401.
      assert.equal((await call("not-a-token-at-all", "203.0.113.10")).statusCode, 401);
    });
  });
});
