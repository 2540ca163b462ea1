/**
 * The audit log of the operator API: who (a person by name, or automation) changed what, when,
 * with which answer, and the resource before and after; refused changes too; never a secret;
 * read back filtered and in keyset pages. Against real PostgreSQL, NATS and webhook-dispatcher.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient } from "./ops-client.ts";
import { createTestStaff, type TestStaff } from "./staff-fixtures.ts";
import { startWebhooksTestbed } from "./webhooks-testbed.ts";

interface Entry {
  id: number;
  at: string;
  actor: { kind: string; id: number | null; name: string };
  method: string;
  route: string;
  resource_type: string;
  resource_id: string | null;
  status_code: number | null;
  before: unknown;
  after: unknown;
  request_id: string;
}

describe("audit log", () => {
  let api: TestApi;
  let shop: TestAccount;
  let receiverUrl: string;
  let close: () => Promise<void>;
  let ops: OpsClient;
  let admin: TestStaff;
  let dispatcher: TestStaff;
  let viewer: TestStaff;
  before(async () => {
    const bed = await startWebhooksTestbed();
    ({ api, shop, close } = bed);
    receiverUrl = bed.receiver.url;
    ops = opsClient(api);
    admin = await createTestStaff(api, "admin", "Alice Admin");
    dispatcher = await createTestStaff(api, "dispatcher", "Dora Dispatcher");
    viewer = await createTestStaff(api, "read_only", "Victor Viewer");
  });
  after(async () => close());

  /** The newest entries, through the API as the console reads them. */
  const entries = async (query = "", as: OpsClient = ops): Promise<Entry[]> => {
    const page = await as.get(`/audit${query ? `?${query}` : ""}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return page.body.entries;
  };
  const latest = async (requestId: string) => {
    const found = (await entries("limit=200")).find((entry) => entry.request_id === requestId);
    assert.ok(found, `no entry for request ${requestId}`);
    return found;
  };
  const call = async (as: OpsClient, method: "post" | "patch" | "put" | "delete", path: string, body?: unknown) => {
    const response = await as[method](path, body);
    return { ...response, requestId: String(response.headers["x-request-id"]) };
  };

  test("a read-only person's change is refused by the API with 403 and audited as refused", async () => {
    const vehicle = (await ops.post("/vehicles", { external_id: "AUDIT-RO-1", provider: "acme" })).body;
    const refused = await call(viewer.ops, "patch", `/vehicles/${vehicle.id}`, { label: "mine now" });
    assert.deepEqual(
      [refused.status, refused.body],
      [403, { errors: ["read_only may not PATCH /ops/v1/vehicles/{id}"] }],
    );
    assert.equal((await ops.get(`/vehicles/${vehicle.id}`)).body.label, null);
    const entry = await latest(refused.requestId);
    assert.deepEqual(
      { ...entry, id: 0, at: "" },
      {
        id: 0,
        at: "",
        actor: { kind: "staff", id: viewer.id, name: "Victor Viewer" },
        method: "PATCH",
        route: "/ops/v1/vehicles/{id}",
        resource_type: "vehicles",
        resource_id: String(vehicle.id),
        status_code: 403,
        before: null,
        after: null,
        request_id: refused.requestId,
      },
    );
    // The read-only person may read the log (any role may).
    assert.ok((await entries("", viewer.ops)).some((e) => e.request_id === refused.requestId));
  });

  test("a dispatcher may start a round but not create an account; both are audited with the person's name", async () => {
    const messenger = (await dispatcher.ops.post("/messengers", { name: "Max" })).body;
    const vehicle = (await dispatcher.ops.post("/vehicles", { external_id: "AUDIT-VAN-1", provider: "acme" })).body;
    const round = (await dispatcher.ops.post("/rounds", { messenger_id: messenger.id, vehicle_id: vehicle.id })).body;
    const started = await call(dispatcher.ops, "post", `/rounds/${round.id}/start`);
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const start = await latest(started.requestId);
    assert.deepEqual(
      [start.actor.name, start.resource_type, start.resource_id, start.status_code],
      ["Dora Dispatcher", "rounds", String(round.id), 200],
    );
    // The round as read before (planned) and as answered (active).
    assert.equal((start.before as { status: string }).status, "planned");
    assert.equal((start.after as { status: string }).status, "active");

    const account = await call(dispatcher.ops, "post", "/accounts", { company_name: "Not mine to make" });
    assert.deepEqual([account.status, account.body], [403, { errors: ["dispatcher may not POST /ops/v1/accounts"] }]);
    const refused = await latest(account.requestId);
    assert.deepEqual(
      [refused.actor.name, refused.resource_type, refused.resource_id, refused.status_code],
      ["Dora Dispatcher", "accounts", null, 403],
    );
  });

  test("a messenger's phone positions are telemetry, not audited, unlike the messenger's creation", async () => {
    const messenger = (await dispatcher.ops.post("/messengers", { name: "Pia" })).body;
    const position = await call(dispatcher.ops, "post", `/messengers/${messenger.id}/positions`, {
      latitude: 48.86,
      longitude: 2.34,
    });
    assert.equal(position.status, 200, JSON.stringify(position.body));
    const recent = await entries("limit=200");
    assert.equal(recent.filter((entry) => entry.request_id === position.requestId).length, 0);
    assert.ok(recent.some((entry) => entry.resource_type === "messengers" && entry.after !== null));
  });

  test("a tariff preview changes nothing and is not audited; a dispatcher may not ask one", async () => {
    const body = {
      base_cents: { outbound: 700, inbound: 700, other: 900 },
      sample: {
        direction: "outbound",
        packages: [{ amount: 1, volume_dm3: 5, weight_kg: 2 }],
        slot_minutes: 120,
        lead_time_minutes: 1440,
      },
    };
    const preview = await call(admin.ops, "post", `/accounts/${shop.accountId}/tariffs/preview`, body);
    assert.deepEqual([preview.status, preview.body.price_cents], [200, 700], JSON.stringify(preview.body));
    const refused = await call(dispatcher.ops, "post", `/accounts/${shop.accountId}/tariffs/preview`, body);
    assert.deepEqual(
      [refused.status, refused.body],
      [403, { errors: ["dispatcher may not POST /ops/v1/accounts/{accountId}/tariffs/preview"] }],
    );
    const recent = await entries("limit=200");
    assert.equal(recent.filter((e) => [preview.requestId, refused.requestId].includes(e.request_id)).length, 0);
  });

  test("automation is audited as automation; a create records the new resource's id and no before", async () => {
    const created = await call(ops, "post", "/messengers", { name: "Auto" });
    assert.equal(created.status, 201);
    const entry = await latest(created.requestId);
    assert.deepEqual(entry.actor, { kind: "automation", id: null, name: "automation" });
    assert.deepEqual(
      [entry.resource_type, entry.resource_id, entry.before],
      ["messengers", String(created.body.id), null],
    );
    assert.deepEqual(entry.after, created.body);
  });

  test("a vehicle PATCH holds the values before and after and the person's name", async () => {
    const vehicle = (await ops.post("/vehicles", { external_id: "AUDIT-VAN-2", provider: "acme", label: "Old van" }))
      .body;
    const patched = await call(dispatcher.ops, "patch", `/vehicles/${vehicle.id}`, {
      label: "New van",
      provider: "beta",
    });
    assert.equal(patched.status, 200);
    const entry = await latest(patched.requestId);
    assert.equal(entry.actor.name, "Dora Dispatcher");
    assert.deepEqual(
      [entry.route, entry.resource_type, entry.resource_id],
      ["/ops/v1/vehicles/{id}", "vehicles", String(vehicle.id)],
    );
    assert.deepEqual(entry.before, vehicle);
    assert.deepEqual(entry.after, { ...vehicle, label: "New van", provider: "beta" });
    assert.match(entry.at, /^\d{4}-\d{2}-\d{2}T/);
  });

  test("refused after validation (422) and unknown resources (404) are audited; a 401 is not", async () => {
    const invalid = await call(dispatcher.ops, "patch", "/vehicles/999999999", { label: 42 });
    assert.equal(invalid.status, 422);
    assert.equal((await latest(invalid.requestId)).status_code, 422);
    const missing = await call(dispatcher.ops, "patch", "/vehicles/999999999", { label: "x" });
    assert.equal(missing.status, 404);
    const entry = await latest(missing.requestId);
    assert.deepEqual([entry.status_code, entry.before, entry.after], [404, null, null]);

    const count = async () =>
      (
        await api.db
          .selectFrom("audit_log")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n;
    const before = await count();
    const stranger = opsClient(api, "not-the-operator-token-at-all-0123456789");
    assert.equal((await stranger.post("/messengers", { name: "Intruder" })).status, 401);
    assert.equal(await count(), before);
  });

  test("a delete (204) reads the resource before, and after finds it gone", async () => {
    const address = await ops.post(`/accounts/${shop.accountId}/addresses`, {
      label: "Audit depot",
      recipient_name: "Depot",
      recipient_phone: "+33 1 23 45 67 89",
      address: "1 Rue de Rivoli",
      postal_code: shop.postalCodes[0],
      city: "Paris",
    });
    assert.equal(address.status, 201, JSON.stringify(address.body));
    const removed = await call(admin.ops, "delete", `/accounts/${shop.accountId}/addresses/${address.body.id}`);
    assert.equal(removed.status, 204);
    const entry = await latest(removed.requestId);
    assert.deepEqual([entry.resource_type, entry.resource_id], ["accounts/addresses", String(address.body.id)]);
    assert.deepEqual(entry.before, address.body);
    assert.equal(entry.after, null);
  });

  test("secrets never reach the audit log: API and staff tokens, tracker tokens, webhook secrets", async () => {
    const secrets: string[] = [];
    const user = (await ops.post(`/accounts/${shop.accountId}/users`, { email: "audit-secrets@shop.example" })).body;
    const apiToken = await ops.post(`/accounts/${shop.accountId}/users/${user.id}/tokens`);
    secrets.push(apiToken.body.token);
    secrets.push((await ops.post(`/staff/${viewer.id}/tokens`, { label: "minted by automation" })).body.token);
    secrets.push((await admin.ops.post(`/staff/${dispatcher.id}/tokens`, { label: "minted by an admin" })).body.token);
    secrets.push((await viewer.ops.post("/staff/me/tokens", { label: "personal" })).body.token);
    const vehicle = (
      await ops.post("/vehicles", {
        external_id: "AUDIT-VAN-3",
        provider: "acme",
        provider_token: "tracker-secret-0000000000000001",
      })
    ).body;
    secrets.push("tracker-secret-0000000000000001");
    const rotatedTracker = await dispatcher.ops.patch(`/vehicles/${vehicle.id}`, {
      provider_token: "tracker-secret-0000000000000002",
    });
    assert.equal(rotatedTracker.status, 200);
    assert.equal(rotatedTracker.body.has_provider_token, true);
    secrets.push("tracker-secret-0000000000000002");
    const webhook = await admin.ops.post(`/accounts/${shop.accountId}/webhooks`, { url: receiverUrl });
    assert.equal(webhook.status, 201, JSON.stringify(webhook.body));
    secrets.push(webhook.body.secret);
    const rotated = await admin.ops.post(`/accounts/${shop.accountId}/webhooks/${webhook.body.id}/rotate`);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    secrets.push(rotated.body.secret);
    assert.equal(secrets.length, 8);
    for (const secret of secrets) assert.ok(secret.length >= 24, secret);

    // The whole table, every column of every row, as text.
    const { rows } = await sql<{ row: string }>`select audit_log::text as row from audit_log`.execute(api.db);
    const table = rows.map((row) => row.row).join("\n");
    for (const secret of secrets)
      assert.ok(!table.includes(secret), `a secret is in the audit log: ${secret.slice(0, 12)}…`);
    // Still, the creations are there, each with its resource and what is not secret.
    const minted = await latest(String(apiToken.headers["x-request-id"]));
    assert.deepEqual([minted.resource_type, minted.resource_id], ["accounts/users/tokens", String(apiToken.body.id)]);
    assert.equal((minted.after as { token: string }).token, "[redacted]");
    assert.equal((minted.after as { hint: string }).hint, apiToken.body.hint);
    const hooks = await entries("resource_type=accounts/webhooks&limit=10");
    assert.deepEqual(
      hooks.map((e) => [e.method, e.route]),
      [
        ["POST", "/ops/v1/accounts/{accountId}/webhooks/{id}/rotate"],
        ["POST", "/ops/v1/accounts/{accountId}/webhooks"],
      ],
    );
    assert.ok(hooks.every((e) => e.resource_id === webhook.body.id));
  });

  test("a large change is kept bounded: long lists cut with a marker, at most 16 KiB a value", async () => {
    const zones = Array.from({ length: 3000 }, (_v, i) => ({
      postal_code: String(10000 + i),
      latitude: 48.8,
      longitude: 2.3,
    }));
    const replaced = await call(admin.ops, "put", `/accounts/${shop.accountId}/zones`, { zones });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body).slice(0, 200));
    const entry = await latest(replaced.requestId);
    const after = entry.after as unknown[];
    assert.ok(Buffer.byteLength(JSON.stringify(after)) <= 16 * 1024);
    assert.match(String(after.at(-1)), /^… \(\d+ more items\)$/);
    assert.deepEqual([entry.resource_type, entry.resource_id], ["accounts", String(shop.accountId)]);
  });

  test("filters by person, kind and resource, newest first, in keyset pages that cover each entry once", async () => {
    const people = await createTestStaff(api, "dispatcher", "Paula Pager");
    const made: number[] = [];
    for (let i = 0; i < 7; i++) made.push((await people.ops.post("/messengers", { name: `Pager ${i}` })).body.id);

    const mine = await entries(`actor_id=${people.id}`);
    assert.equal(mine.length, 7);
    assert.ok(mine.every((e) => e.actor.name === "Paula Pager"));
    assert.deepEqual(
      mine.map((e) => Number(e.resource_id)),
      [...made].reverse(),
    );

    const seen: number[] = [];
    let next: number | null = null;
    let pages = 0;
    do {
      const page = await ops.get(`/audit?actor_id=${people.id}&limit=3${next === null ? "" : `&before_id=${next}`}`);
      assert.equal(page.status, 200);
      seen.push(...page.body.entries.map((e: Entry) => e.id));
      next = page.body.next_before_id;
      pages++;
    } while (next !== null && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(
      seen,
      mine.map((e) => e.id),
    );

    const one = await entries(`resource_type=messengers&resource_id=${made[3]}`);
    assert.deepEqual(
      one.map((e) => e.resource_id),
      [String(made[3])],
    );
    const automation = await entries("actor_kind=automation&limit=200");
    assert.ok(automation.length > 0 && automation.every((e) => e.actor.kind === "automation" && e.actor.id === null));
    assert.deepEqual(await entries("actor_kind=staff&actor_id=999999999"), []);
  });

  test("any role lists the people a filter can name: ids and names by name, disabled ones too, nothing more", async () => {
    const zed = await createTestStaff(api, "read_only", "Zed Zebra");
    const gone = await createTestStaff(api, "dispatcher", "Aaron Gone");
    assert.equal((await ops.patch(`/staff/${gone.id}`, { disabled: true })).status, 200);
    // The viewer may not read the staff (admin), but may read whom the audit log names.
    assert.equal((await viewer.ops.get("/staff")).status, 403);
    const answer = await viewer.ops.get("/audit/people");
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const { people, truncated } = answer.body as {
      people: Array<{ id: number; name: string; disabled: boolean }>;
      truncated: boolean;
    };
    assert.equal(truncated, false);
    const names = people.map((p) => p.name);
    assert.deepEqual(
      names,
      [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      "by name",
    );
    assert.deepEqual(
      people.find((p) => p.id === gone.id),
      { id: gone.id, name: "Aaron Gone", disabled: true },
    );
    assert.deepEqual(
      people.find((p) => p.id === zed.id),
      { id: zed.id, name: "Zed Zebra", disabled: false },
    );
    assert.ok(people.some((p) => p.id === dispatcher.id && p.name === "Dora Dispatcher"));
    assert.equal(JSON.stringify(answer.body).includes("@operator.example"), false, "no e-mail");
    // Its ids are the filter's: the dispatcher's entries are found by the id listed for them.
    await dispatcher.ops.post("/messengers", { name: "Named in the filter" });
    const found = await entries(`actor_id=${people.find((p) => p.name === "Dora Dispatcher")?.id}`);
    assert.ok(found.length > 0 && found.every((e) => e.actor.name === "Dora Dispatcher"));
  });

  test("absurd filters are a 422 naming the field", async () => {
    const cases: Array<[string, string]> = [
      ["actor_kind=robot", "querystring.actor_kind"],
      ["actor_id=0", "querystring.actor_id"],
      ["actor_id=-1", "querystring.actor_id"],
      ["actor_id=1e3", "querystring.actor_id"],
      ["actor_id=99999999999999999999", "querystring.actor_id"],
      ["before_id=abc", "querystring.before_id"],
      ["limit=0", "querystring.limit"],
      ["limit=1000000", "querystring.limit"],
      [`resource_type=${"a".repeat(10_000)}`, "querystring.resource_type"],
      ["resource_type=Vehicles;drop", "querystring.resource_type"],
      [`resource_id=${"9".repeat(201)}`, "querystring.resource_id"],
      ["colour=blue", "querystring.colour"],
    ];
    for (const [query, field] of cases) {
      const response = await ops.get(`/audit?${query}`);
      assert.equal(response.status, 422, query);
      assert.ok(
        response.body.errors.some((m: string) => m.startsWith(`${field} `)),
        `${query}: ${JSON.stringify(response.body)}`,
      );
    }
  });

  test("nothing changes unaudited: no entry, no change; an outcome not written withholds the answer (503)", async () => {
    // An app of its own: its audit table is broken on purpose, one column at a time.
    const broken = await startTestApi();
    try {
      const automation = opsClient(broken);
      const vehicle = (await automation.post("/vehicles", { external_id: "AUDIT-BROKEN", provider: "acme" })).body;

      // The entry cannot be opened: the handler never runs.
      await sql`alter table audit_log rename column before to before_gone`.execute(broken.db);
      const refused = await automation.patch(`/vehicles/${vehicle.id}`, { label: "unaudited" });
      assert.ok(refused.status >= 500, `${refused.status}`);
      assert.equal((await automation.get(`/vehicles/${vehicle.id}`)).body.label, null);
      await sql`alter table audit_log rename column before_gone to before`.execute(broken.db);

      // The entry is opened but its outcome cannot be written: the caller is told, not answered 200.
      await sql`alter table audit_log rename column after to after_gone`.execute(broken.db);
      const withheld = await automation.patch(`/vehicles/${vehicle.id}`, { label: "made" });
      assert.equal(withheld.status, 503);
      assert.match(withheld.body.errors[0], /^the audit log could not be written, so this answer is withheld/);
      assert.ok(Number(withheld.headers["retry-after"]) >= 1);
      await sql`alter table audit_log rename column after_gone to after`.execute(broken.db);
      const trace = await broken.db
        .selectFrom("audit_log")
        .select(["status_code", "route", "before"])
        .where("request_id", "=", String(withheld.headers["x-request-id"]))
        .execute();
      assert.deepEqual(
        trace.map((row) => [row.status_code, row.route, (row.before as { label: unknown }).label]),
        [[null, "/ops/v1/vehicles/{id}", null]],
      );
    } finally {
      await broken.close();
    }
  });
});
