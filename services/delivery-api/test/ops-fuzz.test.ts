/**
 * Hostile bodies against every operator write route: never a 5xx, every refusal in the error
 * shape, and a refused request leaves every table as it was.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import fc from "fast-check";
import { sql } from "kysely";
import { startTestApi, type TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient } from "./ops-client.ts";

const place = {
  recipient_name: "Jeanne Martin",
  recipient_phone: "+33612345678",
  address: "3 Rue du Louvre",
  postal_code: "75001",
  city: "Paris",
  latitude: 48.86,
  longitude: 2.34,
};
const packageType = { name: "Box", volume_dm3: 10, weight_kg: 2, fragility: "fragile", temperature: null };
const settings = { bring_back_containers: true, default_task_gap_minutes: 5, phone_default_region: "FR" };
const TABLES = ["accounts", "users", "api_tokens", "places", "package_types", "delivery_zones"];

let api: TestApi;
let ops: OpsClient;
before(async () => {
  api = await startTestApi();
  ops = opsClient(api);
});
after(async () => api.close());

/** A valid body with one field replaced, removed or added, or something else altogether. */
function hostile(valid: Record<string, unknown>) {
  const keys = Object.keys(valid);
  const value = fc.oneof(
    fc.anything({ maxDepth: 2 }),
    fc.string({ unit: "binary", maxLength: 300 }),
    fc.constantFrom(null, "", " ", -1, 0, 1e308, -1e308, 2 ** 63, "x".repeat(5000), "75001\u0000", "<script>"),
  );
  const added = fc.tuple(fc.string({ maxLength: 20 }), value).map(([key, v]) => ({ ...valid, [key]: v }));
  if (keys.length === 0) return fc.oneof(added, fc.anything({ maxDepth: 3 }));
  return fc.oneof(
    fc.tuple(fc.constantFrom(...keys), value).map(([key, v]) => ({ ...valid, [key]: v })),
    fc.constantFrom(...keys).map((key) => {
      const { [key]: _dropped, ...rest } = valid;
      return rest;
    }),
    added,
    fc.anything({ maxDepth: 3 }),
  );
}

const fingerprint = async () =>
  Promise.all(
    TABLES.map(async (table) => {
      const { rows } = await sql<{ digest: string }>`
        select md5(coalesce(string_agg(t::text, ',' order by t.id), '')) as digest from ${sql.table(table)} t`.execute(
        api.db,
      );
      return rows[0]?.digest;
    }),
  );

test("2,000 hostile operator requests: no 5xx, the error shape, nothing written when refused", async () => {
  const account = (await ops.post("/accounts", { company_name: "Fuzz" })).body.id as number;
  await ops.post(`/accounts/${account}/zones`, { zones: [{ postal_code: "75001", latitude: 48.86, longitude: 2.34 }] });
  const address = (await ops.post(`/accounts/${account}/addresses`, place)).body.id as number;
  const type = (await ops.post(`/accounts/${account}/package_types`, packageType)).body.id as number;
  const user = (await ops.post(`/accounts/${account}/users`, { email: "fuzz@shop.example" })).body.id as number;
  const a = `/accounts/${account}`;
  const zone = { postal_code: "75002", latitude: 48.87, longitude: 2.34 };
  const routes: Array<[method: "post" | "put" | "patch" | "delete", path: string, valid: Record<string, unknown>]> = [
    ["post", "/accounts", { company_name: "Shop", environment: "test", settings }],
    ["patch", a, { company_name: "Shop", settings }],
    ["post", `${a}/users`, { email: "someone@shop.example", name: "Someone" }],
    ["post", `${a}/users/${user}/tokens`, {}],
    ["put", `${a}/default_place`, place],
    ["post", `${a}/addresses`, place],
    ["patch", `${a}/addresses/${address}`, place],
    ["post", `${a}/package_types`, packageType],
    ["patch", `${a}/package_types/${type}`, { ...packageType, archived: false }],
    ["post", `${a}/zones`, { zones: [zone] }],
    ["put", `${a}/zones`, { zones: [zone, { ...zone, postal_code: "75001" }] }],
    ["delete", `${a}/zones`, { postal_codes: ["75002"] }],
  ];
  let sent = 0;
  const statuses = new Map<number, number>();
  for (const [index, [method, path, valid]] of routes.entries()) {
    const bodies = fc.sample(hostile(valid), { numRuns: 170, seed: Number(process.env.FUZZ_SEED ?? 42) + index });
    for (const body of bodies) {
      const before = await fingerprint();
      const response = await ops[method](path, body);
      sent++;
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const shown = `${method.toUpperCase()} ${path} ${JSON.stringify(body)?.slice(0, 300)} → ${response.status} ${JSON.stringify(response.body)}`;
      assert.ok(response.status < 500, shown);
      if (response.status >= 400) {
        assert.ok(
          Array.isArray(response.body?.errors) &&
            response.body.errors.length > 0 &&
            response.body.errors.every((e: unknown) => typeof e === "string"),
          shown,
        );
        assert.deepEqual(await fingerprint(), before, `refused yet written: ${shown}`);
      }
    }
  }
  assert.ok(sent >= 2000, `sent ${sent}`);
  if (process.env.FUZZ_SEED) console.log(JSON.stringify([...statuses]));
  assert.ok((statuses.get(422) ?? 0) > 1000, JSON.stringify([...statuses]));
});
