import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestApi, type TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient } from "./ops-client.ts";

const zone = (postal_code: string, latitude = 48.86, longitude = 2.34) => ({ postal_code, latitude, longitude });

describe("operator API: delivery zones", () => {
  let api: TestApi;
  let ops: OpsClient;
  let accountId: number;
  let otherId: number;
  before(async () => {
    api = await startTestApi();
    ops = opsClient(api);
    accountId = (await ops.post("/accounts", { company_name: "Shop" })).body.id;
    otherId = (await ops.post("/accounts", { company_name: "Other" })).body.id;
  });
  after(async () => api.close());

  test("POST adds zones and moves the centroid of known ones; the answer is the whole set", async () => {
    assert.deepEqual((await ops.get(`/accounts/${accountId}/zones`)).body, []);
    const added = await ops.post(`/accounts/${accountId}/zones`, {
      zones: [zone("75002", 48.868, 2.343), zone("75001", 48.862, 2.336)],
    });
    assert.equal(added.status, 200);
    assert.deepEqual(added.body, [zone("75001", 48.862, 2.336), zone("75002", 48.868, 2.343)]);
    const moved = await ops.post(`/accounts/${accountId}/zones`, {
      zones: [zone("75001", 48.8606, 2.3376), zone(" 75003 ")],
    });
    assert.deepEqual(moved.body, [zone("75001", 48.8606, 2.3376), zone("75002", 48.868, 2.343), zone("75003")]);
    assert.deepEqual((await ops.get(`/accounts/${accountId}/zones`)).body, moved.body);
    assert.deepEqual((await ops.get(`/accounts/${otherId}/zones`)).body, [], "zones belong to one account");
  });

  test("PUT replaces the whole set, and an empty set removes every zone", async () => {
    const replaced = await ops.put(`/accounts/${otherId}/zones`, { zones: [zone("69001"), zone("69002")] });
    assert.deepEqual(replaced.body, [zone("69001"), zone("69002")]);
    const again = await ops.put(`/accounts/${otherId}/zones`, {
      zones: [zone("69002", 45.75, 4.83), zone("sw1a 1aa")],
    });
    assert.deepEqual(again.body, [zone("69002", 45.75, 4.83), zone("SW1A 1AA")]);
    assert.deepEqual((await ops.put(`/accounts/${otherId}/zones`, { zones: [] })).body, []);
  });

  test("DELETE removes one zone by path, or several at once, all or nothing", async () => {
    await ops.put(`/accounts/${otherId}/zones`, { zones: [zone("13001"), zone("13002"), zone("13003")] });
    const one = await ops.delete(`/accounts/${otherId}/zones/13001`);
    assert.deepEqual([one.status, one.body], [200, [zone("13002"), zone("13003")]]);
    const missing = await ops.delete(`/accounts/${otherId}/zones`, { postal_codes: ["13002", "13099"] });
    assert.deepEqual([missing.status, missing.body], [404, { errors: ["zone 13099 not found"] }]);
    assert.equal((await ops.get(`/accounts/${otherId}/zones`)).body.length, 2, "nothing removed");
    const both = await ops.delete(`/accounts/${otherId}/zones`, { postal_codes: ["13002", "13003"] });
    assert.deepEqual(both.body, []);
    const unknown = await ops.delete(`/accounts/${otherId}/zones/13001`);
    assert.deepEqual([unknown.status, unknown.body], [404, { errors: ["zone 13001 not found"] }]);
    assert.equal((await ops.delete(`/accounts/${otherId}/zones/@@`)).status, 404);
  });

  test("another account's zone cannot be removed through this account", async () => {
    await ops.put(`/accounts/${otherId}/zones`, { zones: [zone("33000")] });
    const response = await ops.delete(`/accounts/${accountId}/zones/33000`);
    assert.deepEqual([response.status, response.body], [404, { errors: ["zone 33000 not found"] }]);
    assert.deepEqual((await ops.get(`/accounts/${otherId}/zones`)).body, [zone("33000")]);
  });

  test("bad bodies are refused with exact messages and change nothing", async () => {
    const before = (await ops.get(`/accounts/${accountId}/zones`)).body;
    const cases: Array<[string, "post" | "put" | "delete", unknown, string[]]> = [
      ["no zones", "post", { zones: [] }, ["zones must have at least 1 entry"]],
      ["a bare array", "post", [zone("75004")], ["body must be an object"]],
      [
        "bad fields",
        "post",
        { zones: [{ postal_code: "", latitude: 91, longitude: -181, name: "x" }, { latitude: "48" }] },
        [
          "zones[0].postal_code must not be blank",
          "zones[0].latitude must be at most 90",
          "zones[0].longitude must be at least -180",
          "zones[0].name is not a known field",
          "zones[1].postal_code is required",
          "zones[1].longitude is required",
          "zones[1].latitude must be a number",
        ],
      ],
      [
        "duplicates and bad characters",
        "put",
        { zones: [zone("75004"), zone("75005"), zone(" 75004"), zone("75/06")] },
        [
          "zones[2].postal_code 75004 is already given in zones[0]",
          "zones[3].postal_code must hold letters, digits, spaces or hyphens only",
        ],
      ],
      ["no postal codes", "delete", { postal_codes: [] }, ["postal_codes must have at least 1 entry"]],
    ];
    for (const [label, method, body, errors] of cases) {
      const response = await ops[method](`/accounts/${accountId}/zones`, body);
      assert.equal(response.status, 422, label);
      assert.deepEqual(new Set(response.body.errors), new Set(errors), `${label}: ${JSON.stringify(response.body)}`);
    }
    assert.deepEqual((await ops.get(`/accounts/${accountId}/zones`)).body, before);
  });

  test("an unknown account is 404", async () => {
    for (const response of [
      await ops.get("/accounts/999999/zones"),
      await ops.post("/accounts/999999/zones", { zones: [zone("75001")] }),
      await ops.put("/accounts/999999/zones", { zones: [] }),
    ]) {
      assert.deepEqual([response.status, response.body], [404, { errors: ["account 999999 not found"] }]);
    }
  });
});
