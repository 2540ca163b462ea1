import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createTestAccount, startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient, TIMESTAMP } from "./ops-client.ts";

describe("package types: the operator's catalogue and GET /api/v2/package_types", () => {
  let api: TestApi;
  let ops: OpsClient;
  let client: TestAccount;
  let other: TestAccount;
  before(async () => {
    api = await startTestApi();
    ops = opsClient(api);
    client = await createTestAccount(api.db);
    other = await createTestAccount(api.db);
  });
  after(async () => api.close());

  const listAsClient = async (account: TestAccount) => {
    const response = await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers: account.headers });
    assert.equal(response.statusCode, 200);
    return response.json() as Array<{ id: number; type: string }>;
  };

  test("create answers 201 with the entry; the client sees it in the spec's shape", async () => {
    const created = await ops.post(`/accounts/${client.accountId}/package_types`, {
      name: "Cool box",
      volume_dm3: 12.5,
      weight_kg: 4,
      fragility: "fragile",
      temperature: "chilled",
    });
    assert.equal(created.status, 201);
    assert.match(created.body.created_at, TIMESTAMP);
    assert.deepEqual(created.body, {
      id: created.body.id,
      name: "Cool box",
      volume_dm3: 12.5,
      weight_kg: 4,
      fragility: "fragile",
      temperature: "chilled",
      is_size_category: false,
      archived_at: null,
      created_at: created.body.created_at,
    });
    const listed = await listAsClient(client);
    assert.deepEqual(listed.at(-1), {
      id: created.body.id,
      type: "Cool box",
      volume: 12.5,
      weight: 4,
      fragility: "fragile",
      temperature: "chilled",
    });
  });

  test("the client list holds the caller's types only, oldest first", async () => {
    const mine = await listAsClient(client);
    const theirs = await listAsClient(other);
    assert.deepEqual(mine.slice(0, 2), [
      { id: client.packageTypeIds[0], type: "Box M", volume: 30, weight: 5, fragility: null, temperature: null },
      { id: client.packageTypeIds[1], type: "Size L", volume: 80, weight: 15, fragility: null, temperature: null },
    ]);
    assert.deepEqual(
      theirs.map((t) => t.id),
      other.packageTypeIds,
    );
    assert.ok(!mine.some((t) => other.packageTypeIds.includes(t.id)));
  });

  test("the client list needs credentials", async () => {
    const response = await api.app.inject({ method: "GET", url: "/api/v2/package_types" });
    assert.deepEqual(
      [response.statusCode, response.json()],
      [401, { errors: ["X-User-Email and X-User-Token headers are required"] }],
    );
  });

  test("names are unique per account, archived ones included; other accounts may reuse them", async () => {
    const taken = await ops.post(`/accounts/${client.accountId}/package_types`, {
      name: "Box M",
      volume_dm3: 1,
      weight_kg: 1,
    });
    assert.deepEqual(
      [taken.status, taken.body],
      [422, { errors: [`name Box M is already used by package type ${client.packageTypeIds[0]}`] }],
    );
    const elsewhere = await ops.post(`/accounts/${other.accountId}/package_types`, {
      name: "Cool box",
      volume_dm3: 1,
      weight_kg: 1,
    });
    assert.equal(elsewhere.status, 201);
  });

  test("create refuses bad bodies with exact messages and writes nothing", async () => {
    const count = async () =>
      (
        await api.db
          .selectFrom("package_types")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n;
    const before = await count();
    const cases: Array<[unknown, string[]]> = [
      [{}, ["name is required", "volume_dm3 is required", "weight_kg is required"]],
      [
        { name: "X", volume_dm3: 0, weight_kg: -1, fragility: "glass", temperature: "hot", is_size_category: "yes" },
        [
          "volume_dm3 must be greater than 0",
          "weight_kg must be greater than 0",
          "fragility must be one of not_fragile, fragile, very_fragile, null",
          "temperature must be one of ambient, chilled, frozen, null",
          "is_size_category must be true or false",
        ],
      ],
      [{ name: "  ", volume_dm3: 1, weight_kg: 1 }, ["name must not be blank"]],
      [
        { name: "X", volume_dm3: 100001, weight_kg: "2", colour: "red" },
        ["volume_dm3 must be at most 100000", "weight_kg must be a number", "colour is not a known field"],
      ],
    ];
    for (const [body, errors] of cases) {
      const response = await ops.post(`/accounts/${client.accountId}/package_types`, body);
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.deepEqual(new Set(response.body.errors), new Set(errors), JSON.stringify(response.body));
    }
    assert.equal(await count(), before);
  });

  test("archive hides a type from clients and keeps it for operators; PATCH restores and edits", async () => {
    const type = (
      await ops.post(`/accounts/${client.accountId}/package_types`, {
        name: "Size S",
        volume_dm3: 10,
        weight_kg: 3,
        is_size_category: true,
      })
    ).body;
    assert.equal(type.is_size_category, true);
    const archived = await ops.delete(`/accounts/${client.accountId}/package_types/${type.id}`);
    assert.equal(archived.status, 200);
    assert.match(archived.body.archived_at, TIMESTAMP);
    assert.ok(!(await listAsClient(client)).some((t) => t.id === type.id));
    const opsList = await ops.get(`/accounts/${client.accountId}/package_types`);
    assert.ok(!opsList.body.some((t: { id: number }) => t.id === type.id));
    const withArchived = await ops.get(`/accounts/${client.accountId}/package_types?include_archived=true`);
    assert.deepEqual(
      withArchived.body.find((t: { id: number }) => t.id === type.id),
      archived.body,
    );
    const again = await ops.delete(`/accounts/${client.accountId}/package_types/${type.id}`);
    assert.equal(again.body.archived_at, archived.body.archived_at);

    const reused = await ops.post(`/accounts/${client.accountId}/package_types`, {
      name: "Size S",
      volume_dm3: 1,
      weight_kg: 1,
    });
    assert.deepEqual(reused.body, {
      errors: [`name Size S is already used by package type ${type.id} (archived; restore it with archived: false)`],
    });

    const restored = await ops.patch(`/accounts/${client.accountId}/package_types/${type.id}`, {
      archived: false,
      weight_kg: 2.5,
      temperature: "frozen",
    });
    assert.equal(restored.status, 200);
    assert.deepEqual(restored.body, { ...archived.body, archived_at: null, weight_kg: 2.5, temperature: "frozen" });
    assert.ok((await listAsClient(client)).some((t) => t.id === type.id));
    assert.deepEqual((await ops.get(`/accounts/${client.accountId}/package_types/${type.id}`)).body, restored.body);

    const renamed = await ops.patch(`/accounts/${client.accountId}/package_types/${type.id}`, { name: "Box M" });
    assert.deepEqual(renamed.body, {
      errors: [`name Box M is already used by package type ${client.packageTypeIds[0]}`],
    });
    const bad = await ops.patch(`/accounts/${client.accountId}/package_types/${type.id}`, { archived: "no", id: 3 });
    assert.deepEqual(new Set(bad.body.errors), new Set(["archived must be true or false", "id is not a known field"]));
  });

  test("another account's package type is 404 on every route", async () => {
    const theirs = other.packageTypeIds[0];
    const expected = { errors: [`package type ${theirs} not found`] };
    for (const response of [
      await ops.get(`/accounts/${client.accountId}/package_types/${theirs}`),
      await ops.patch(`/accounts/${client.accountId}/package_types/${theirs}`, { weight_kg: 1 }),
      await ops.delete(`/accounts/${client.accountId}/package_types/${theirs}`),
    ]) {
      assert.deepEqual([response.status, response.body], [404, expected]);
    }
    const row = await api.db
      .selectFrom("package_types")
      .selectAll()
      .where("id", "=", theirs ?? 0)
      .executeTakeFirstOrThrow();
    assert.deepEqual([row.weight_kg, row.archived_at], [5, null]);
    const unknownAccount = await ops.get("/accounts/999999/package_types");
    assert.deepEqual(unknownAccount.body, { errors: ["account 999999 not found"] });
  });
});
