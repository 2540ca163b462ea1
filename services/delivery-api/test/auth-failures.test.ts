/**
 * Failed authentications are budgeted per client address (behind the trusted proxy, from
 * X-Forwarded-For) and per e-mail: a flood of wrong tokens is refused with 429 before any
 * token lookup, while the real user holding the right token keeps getting 200.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { hashToken } from "../src/auth/client-auth.ts";
import { createTestAccount, startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";

const FAILURES = 5;

describe("failed authentication budgets", () => {
  let api: TestApi;
  let realUser: TestAccount;
  before(async () => {
    api = await startTestApi({
      API_AUTH_FAILURE_QUOTA: String(FAILURES),
      API_AUTH_FAILURE_WINDOW_SECONDS: "3600",
      // Every request looks its token up: the login cache cannot hide what the budgets do.
      API_AUTH_CACHE_MS: "0",
      TRUSTED_PROXIES: "loopback",
      API_TRUSTED_TOKENS_REFRESH_MS: "100",
    });
    realUser = await createTestAccount(api.db);
    // Loads the active tokens: realUser's token is trusted without ever having been used.
    await api.start();
  });
  after(async () => api.close());

  const call = (headers: Record<string, string>, address: string) =>
    api.app.inject({
      method: "GET",
      url: "/api/v2/package_types",
      headers: { ...headers, "x-forwarded-for": address },
    });
  const tokenLookups = async () => {
    const text = (await api.app.inject({ method: "GET", url: "/metrics" })).body;
    return Number(/^api_token_lookups_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? "0");
  };
  const wrong = (email: string) => ({ "x-user-email": email, "x-user-token": randomBytes(24).toString("base64url") });

  test("a flood of wrong tokens from one address is refused without a lookup; the real user there still gets 200", async () => {
    const attacker = "203.0.113.7";
    const before = await tokenLookups();
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      statuses.push((await call(wrong(`nobody-${i}@attacker.example`), attacker)).statusCode);
      if (i % 50 === 0) assert.equal((await call(realUser.headers, attacker)).statusCode, 200);
    }
    assert.deepEqual(statuses.slice(0, FAILURES), Array(FAILURES).fill(401));
    assert.deepEqual(new Set(statuses.slice(FAILURES)), new Set([429]));
    // 5 wrong tokens and the real user's 4 requests were looked up; the 195 refusals were not.
    assert.equal((await tokenLookups()) - before, FAILURES + 4);

    const refused = await call(wrong("nobody@attacker.example"), attacker);
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers["retry-after"]) >= 1);
    assert.equal(refused.headers["ratelimit-policy"], `"failed-auth-address";q=${FAILURES};w=3600`);
    assert.match(String(refused.headers.ratelimit), /^"failed-auth-address";r=0;t=\d+$/);
    assert.match(refused.json().errors[0], /^too many failed authentications from this address; retry after \d+ s$/);
    // Missing headers count as failures too, and are refused the same way.
    assert.equal((await call({}, attacker)).statusCode, 429);

    // Another address is not affected: its first failure is a plain 401.
    assert.equal((await call(wrong("nobody@attacker.example"), "203.0.113.8")).statusCode, 401);
  });

  test("a flood on one e-mail from many addresses stops its lookups, not its owner", async () => {
    const victim = await createTestAccount(api.db);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await tokenLookups();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await call(wrong(victim.email), `198.51.100.${i + 1}`)).statusCode);
    assert.deepEqual(statuses.slice(0, FAILURES), Array(FAILURES).fill(401));
    assert.deepEqual(new Set(statuses.slice(FAILURES)), new Set([429]));
    assert.equal((await tokenLookups()) - before, FAILURES);
    const refused = await call(wrong(victim.email.toUpperCase()), "198.51.100.200");
    assert.equal(refused.statusCode, 429);
    assert.match(refused.json().errors[0], /^too many failed authentications for this e-mail/);

    // The owner's token was created after start and never used: the refresh trusted it, so
    // neither the flooded e-mail nor a flooding address holds it back.
    assert.equal((await call(victim.headers, "192.0.2.10")).statusCode, 200);
    assert.equal((await call(victim.headers, "198.51.100.1")).statusCode, 200);
  });

  test("a trusted token passes a flooded e-mail and a flooding address; once revoked it is counted again", async () => {
    const user = await createTestAccount(api.db);
    const address = "192.0.2.50";
    assert.equal((await call(user.headers, address)).statusCode, 200);
    for (let i = 0; i < FAILURES + 3; i++) await call(wrong(user.email), address);
    assert.equal((await call(wrong(user.email), address)).statusCode, 429);
    assert.equal((await call(user.headers, address)).statusCode, 200);

    await api.db
      .updateTable("api_tokens")
      .set({ revoked_at: new Date() })
      .where("token_sha256", "=", hashToken(user.token))
      .execute();
    const before = await tokenLookups();
    // Revoked: looked up once more (and answered like any failure from this flooding address),
    // then no longer trusted, so no more lookups.
    assert.equal((await call(user.headers, address)).statusCode, 429);
    assert.equal((await tokenLookups()) - before, 1);
    assert.equal((await call(user.headers, address)).statusCode, 429);
    assert.equal((await tokenLookups()) - before, 1);
  });

  test("without a trusted proxy, X-Forwarded-For is ignored: the TCP peer is the client", async () => {
    const direct = await startTestApi({
      API_AUTH_FAILURE_QUOTA: String(FAILURES),
      API_AUTH_FAILURE_WINDOW_SECONDS: "3600",
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < FAILURES + 3; i++) {
        const answer = await direct.app.inject({
          method: "GET",
          url: "/api/v2/package_types",
          headers: { ...wrong("x@attacker.example"), "x-forwarded-for": `203.0.113.${i + 1}` },
        });
        statuses.push(answer.statusCode);
      }
      assert.deepEqual(statuses, [...Array(FAILURES).fill(401), 429, 429, 429]);
    } finally {
      await direct.close();
    }
  });
});
