import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { fleetKey } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { seedDemo } from "../src/seed/demo-seed.ts";
import { fleetBucket } from "./dispatch-fixtures.ts";
import { startTestApi, type TestApi } from "./fixtures.ts";
import { opsClient } from "./ops-client.ts";

const SECRET = "demo-seed-secret-for-tests-0123456789";
const TABLES = [
  "accounts",
  "users",
  "api_tokens",
  "package_types",
  "delivery_zones",
  "places",
  "messengers",
  "vehicles",
  "rounds",
  "staff",
] as const;

const DEMO_VEHICLES = [
  { external_id: "DEMO-VAN-1", provider: "demo-tracker", active: true },
  { external_id: "DEMO-VAN-2", provider: "demo-tracker", active: false },
];

describe("demo seed", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(async () => api.close());

  const counts = async () => {
    const result: Record<string, unknown> = {};
    for (const table of TABLES) {
      result[table] = (
        await api.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n;
    }
    return result;
  };

  test("creates the two demo accounts with everything a client needs to start", async () => {
    const seeded = await seedDemo(api.db, { secret: SECRET });
    assert.deepEqual(
      seeded.accounts.map((a) => [a.company_name, a.environment, a.email]),
      [
        ["Demo Shop", "production", "integrator@demo-shop.example"],
        ["Demo Shop Test", "test", "integrator@demo-shop-test.example"],
      ],
    );
    for (const account of seeded.accounts) {
      assert.match(account.token, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(account.postal_codes, ["75001", "75002", "75003", "75004", "75011"]);
      assert.equal(account.saved_address_ids.length, 1);
      const headers = { "x-user-email": account.email, "x-user-token": account.token };
      const types = await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers });
      assert.equal(types.statusCode, 200);
      assert.deepEqual(
        types.json().map((t: { id: number; type: string }) => [t.id, t.type]),
        account.package_type_ids.map((id, i) => [id, ["Parcel", "Cool box", "Size M"][i]]),
      );
      const ops = opsClient(api);
      const sizeCategory = await ops.get(
        `/accounts/${account.account_id}/package_types/${account.package_type_ids[2]}`,
      );
      assert.equal(sizeCategory.body.is_size_category, true);
      const place = await ops.get(`/accounts/${account.account_id}/default_place`);
      assert.equal(place.body.address, "10 Rue de Rivoli");
      const address = await ops.get(`/accounts/${account.account_id}/addresses/${account.saved_address_ids[0]}`);
      assert.equal(address.body.postal_code, "75001");
    }
    assert.notEqual(seeded.accounts[0]?.token, seeded.accounts[1]?.token);
  });

  test("seeds a messenger, a vehicle in an active round and one without; the relay puts them into FLEET", async () => {
    const seeded = await seedDemo(api.db, { secret: SECRET });
    assert.deepEqual(seeded.vehicles, DEMO_VEHICLES);
    const ops = opsClient(api);
    const vehicles = (await ops.get("/vehicles")).body as Array<{ id: number; external_id: string }>;
    const van1 = vehicles.find((v) => v.external_id === "DEMO-VAN-1");
    assert.ok(van1);
    const view = (await ops.get(`/vehicles/${van1.id}`)).body;
    assert.equal(typeof view.active_round_id, "number");
    const round = (await ops.get(`/rounds/${view.active_round_id}`)).body;
    assert.equal(round.status, "active");
    assert.equal((await ops.get(`/messengers/${round.messenger_id}`)).body.name, "Demo Courier");

    // The running delivery-api's fleet relay publishes what the seed wrote to the fleet outbox.
    await api.start();
    const kv = await fleetBucket(api);
    const entry = async (id: string) => {
      const value = await kv.get(fleetKey(id));
      return value && value.length > 0 ? value.json<Record<string, unknown>>() : null;
    };
    await waitFor(async () => (await entry("DEMO-VAN-1"))?.active_round_id === round.id, 5000, "DEMO-VAN-1 active");
    assert.equal((await entry("DEMO-VAN-1"))?.provider, "demo-tracker");
    assert.equal((await entry("DEMO-VAN-1"))?.messenger_id, round.messenger_id);
    await waitFor(async () => (await entry("DEMO-VAN-2")) !== null, 5000, "DEMO-VAN-2 in the bucket");
    assert.equal((await entry("DEMO-VAN-2"))?.active_round_id, null);
  });

  test("seeds one staff person per role, who can be given a token and act with that role", async () => {
    const seeded = await seedDemo(api.db, { secret: SECRET });
    assert.deepEqual(
      seeded.staff.map(({ email, name, role }) => [email, name, role]),
      [
        ["admin@operator.example", "Demo Admin", "admin"],
        ["dispatcher@operator.example", "Demo Dispatcher", "dispatcher"],
        ["viewer@operator.example", "Demo Viewer", "read_only"],
      ],
    );
    const ops = opsClient(api);
    for (const person of seeded.staff) {
      assert.deepEqual((await ops.get(`/staff/${person.id}`)).body.email, person.email);
      const minted = await ops.post(`/staff/${person.id}/tokens`, { label: "demo" });
      const me = await opsClient(api, minted.body.token).get("/staff/me");
      assert.deepEqual([me.body.name, me.body.role], [person.name, person.role]);
    }
  });

  test("a re-seed puts the demo vehicle back on an active round after an operator ended it", async () => {
    const ops = opsClient(api);
    const vehicles = (await ops.get("/vehicles")).body as Array<{ id: number; external_id: string }>;
    const van1 = vehicles.find((v) => v.external_id === "DEMO-VAN-1");
    const ended = (await ops.get(`/vehicles/${van1?.id}`)).body.active_round_id;
    assert.equal((await ops.post(`/rounds/${ended}/end`)).status, 200);
    assert.equal((await ops.get(`/vehicles/${van1?.id}`)).body.active_round_id, null);
    const seeded = await seedDemo(api.db, { secret: SECRET });
    assert.deepEqual(seeded.vehicles, DEMO_VEHICLES);
    const again = (await ops.get(`/vehicles/${van1?.id}`)).body.active_round_id;
    assert.equal(typeof again, "number");
    assert.notEqual(again, ended);
  });

  test("a second run changes nothing and returns the same ids and tokens", async () => {
    const first = await seedDemo(api.db, { secret: SECRET });
    const before = await counts();
    // An operator's change to a seeded row survives a re-seed.
    await api.db.updateTable("delivery_zones").set({ latitude: 48.9 }).where("postal_code", "=", "75011").execute();
    const second = await seedDemo(api.db, { secret: SECRET });
    assert.deepEqual(second, first);
    assert.deepEqual(await counts(), before);
    const zone = await api.db
      .selectFrom("delivery_zones")
      .select("latitude")
      .where("postal_code", "=", "75011")
      .execute();
    assert.deepEqual(
      zone.map((z) => z.latitude),
      [48.9, 48.9],
    );
  });

  test("concurrent runs still create each account once", async () => {
    const runs = await Promise.all([seedDemo(api.db, { secret: SECRET }), seedDemo(api.db, { secret: SECRET })]);
    assert.deepEqual(runs[0], runs[1]);
    const demo = await api.db.selectFrom("accounts").select("id").where("company_name", "like", "Demo Shop%").execute();
    assert.equal(demo.length, 2);
    const vans = await api.db.selectFrom("vehicles").select("id").where("external_id", "like", "DEMO-VAN-%").execute();
    assert.equal(vans.length, 2);
    const active = await api.db.selectFrom("rounds").select("id").where("status", "=", "active").execute();
    assert.equal(active.length, 1);
  });

  test("a new secret adds a new token and keeps the accounts and the old token", async () => {
    const first = await seedDemo(api.db, { secret: SECRET });
    const renewed = await seedDemo(api.db, { secret: `${SECRET}-renewed` });
    assert.deepEqual(
      renewed.accounts.map(({ token: _t, ...rest }) => rest),
      first.accounts.map(({ token: _t, ...rest }) => rest),
    );
    for (const [i, account] of renewed.accounts.entries()) {
      assert.notEqual(account.token, first.accounts[i]?.token);
      for (const token of [account.token, first.accounts[i]?.token ?? ""]) {
        const headers = { "x-user-email": account.email, "x-user-token": token };
        assert.equal((await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers })).statusCode, 200);
      }
    }
    await assert.rejects(seedDemo(api.db, { secret: "short" }), /at least 16 characters/);
  });

  test("the seed command prints the same JSON as seedDemo", async () => {
    const expected = await seedDemo(api.db, { secret: SECRET });
    const command = fileURLToPath(new URL("../src/seed/seed-command.ts", import.meta.url));
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [command],
        { env: { ...process.env, DATABASE_URL: api.config.DATABASE_URL, DEMO_SEED_SECRET: SECRET }, timeout: 20_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout)),
      );
    });
    assert.deepEqual(JSON.parse(output), expected);
  });
});
