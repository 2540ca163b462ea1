/**
 * The catalogue cache with the API running: creates and quotes see every change to zones,
 * package types and places — at once when the change goes through this replica's operator API,
 * as soon as PostgreSQL's notification arrives when it is made elsewhere (another replica, SQL) —
 * and a create whose catalogue is cached reads none of it again. With its LISTEN connection
 * lost, the cache serves nothing until LISTEN is back.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createLogger } from "@dos/service-kit";
import { waitFor } from "@dos/service-kit/testing";
import { sql } from "kysely";
import { createCatalogueLoader } from "../src/deliveries/catalogue.repository.ts";
import { CATALOGUE_CHANNEL, createCatalogueCache } from "../src/deliveries/catalogue-cache.ts";
import type { PlaceData } from "../src/deliveries/delivery-draft.ts";
import {
  type DeliveriesTestbed,
  json,
  outboundBody,
  place,
  slot,
  startDeliveriesTestbed,
} from "./delivery-fixtures.ts";
import { OPS_TOKEN } from "./fixtures.ts";

let bed: DeliveriesTestbed;
before(async () => {
  bed = await startDeliveriesTestbed();
  await bed.api.start();
  await waitFor(async () => (await listenerPids()).length === 1, 5000, "the catalogue cache to LISTEN");
});
after(async () => bed.close());

const listenerPids = async () => {
  const { rows } = await sql<{ pid: number }>`
    select pid from pg_stat_activity
    where datname = current_database() and query = ${`LISTEN ${CATALOGUE_CHANNEL}`}
  `.execute(bed.api.db);
  return rows.map((row) => row.pid);
};

/** A quote applies every rule of create and saves nothing: what a create would answer, repeatable. */
const quote = (body: Record<string, unknown>) =>
  bed.api.app.inject({ method: "POST", url: "/api/v2/deliveries/quote", headers: bed.account.headers, payload: body });

const ops = (method: "DELETE" | "POST", url: string, payload: Record<string, unknown>) =>
  bed.api.app.inject({
    method,
    url: `/ops/v1/accounts/${bed.account.accountId}${url}`,
    headers: { authorization: `Bearer ${OPS_TOKEN}` },
    payload,
  });

describe("a change to the catalogue", () => {
  test("through this replica's operator API: the next create sees it at once", async () => {
    const body = outboundBody(bed.account, {
      dropoff: { ...slot(), place: place(bed.account, { postal_code: "75002" }) },
    });
    assert.equal((await quote(body)).statusCode, 200, "75002 is a zone: cached now");
    assert.equal((await ops("DELETE", "/zones", { postal_codes: ["75002"] })).statusCode, 200);
    const refused = await quote(body);
    assert.equal(refused.statusCode, 422);
    assert.deepEqual(json(refused), { errors: ["dropoff.place.postal_code 75002 is not in a delivered zone"] });
    assert.equal(
      (await ops("POST", "/zones", { zones: [{ postal_code: "75002", latitude: 48.868, longitude: 2.343 }] }))
        .statusCode,
      200,
    );
    assert.equal((await quote(body)).statusCode, 200);
  });

  test("made elsewhere (another replica, SQL): seen as soon as PostgreSQL's notification arrives", async () => {
    const typeId = bed.account.packageTypeIds[0] as number;
    const body = outboundBody(bed.account);
    assert.equal((await quote(body)).statusCode, 200, "the package type is cached now");
    await bed.api.db.updateTable("package_types").set({ archived_at: new Date() }).where("id", "=", typeId).execute();
    await waitFor(async () => (await quote(body)).statusCode === 422, 5000, "the archived type to be refused");
    await bed.api.db.updateTable("package_types").set({ archived_at: null }).where("id", "=", typeId).execute();
    await waitFor(async () => (await quote(body)).statusCode === 200, 5000, "the restored type to be accepted");
  });
});

test("a create whose catalogue is cached reads none of it again", async () => {
  const statements: string[] = [];
  const counted = {
    query: (config: { name: string; text: string; values: unknown[] }) => {
      statements.push(config.name);
      return bed.api.pool.query(config);
    },
  } as unknown as typeof bed.api.pool;
  const cache = createCatalogueCache({ pool: bed.api.pool, logger: createLogger("catalogue-test", "silent") });
  cache.start();
  try {
    await waitFor(async () => (await listenerPids()).length === 2, 5000, "this cache to LISTEN too");
    const loader = createCatalogueLoader(bed.api.db, counted, cache);
    const refs = { savedAddressIds: [], packageTypeIds: bed.account.packageTypeIds, postalCodes: ["75001"] };
    const first = await loader.load({ accountId: bed.account.accountId, refs });
    const second = await loader.load({ accountId: bed.account.accountId, refs });
    assert.deepEqual(statements, ["delivery_catalogues"]);
    assert.deepEqual(second.zones, first.zones);
    assert.deepEqual(second.packageTypes, first.packageTypes);
    assert.deepEqual(second.defaultPlace, first.defaultPlace);
  } finally {
    await cache.stop();
  }
});

describe("the cache itself", () => {
  const entries = (defaultPlace: PlaceData | null) => ({
    defaultPlace,
    savedAddresses: new Map(),
    packageTypes: new Map(),
    zones: new Map([["75001", { latitude: 48.86, longitude: 2.34 }]]),
  });
  const refs = { savedAddressIds: [], packageTypeIds: [], postalCodes: ["75001"] };
  const depot: PlaceData = {
    recipient_name: "Depot",
    recipient_phone: null,
    recipient_email: null,
    company_name: "Shop",
    address: "1 Rue du Dépôt",
    postal_code: "75001",
    city: "Paris",
    address_instructions: null,
    latitude: null,
    longitude: null,
  };

  test("serves only while it listens; a lost LISTEN connection empties it, and it serves again once back", async () => {
    const cache = createCatalogueCache({ pool: bed.api.pool, logger: createLogger("catalogue-test", "silent") });
    assert.equal(cache.lookup(1, refs), null);
    cache.store(1, entries(depot), cache.mark());
    assert.equal(cache.lookup(1, refs), null, "nothing is kept before LISTEN is in place");
    const before = new Set(await listenerPids());
    cache.start();
    try {
      await waitFor(async () => (await listenerPids()).some((pid) => !before.has(pid)), 5000, "the cache to LISTEN");
      cache.store(1, entries(depot), cache.mark());
      assert.ok(cache.lookup(1, refs), "kept while listening");
      const [pid] = (await listenerPids()).filter((p) => !before.has(p));
      await sql`select pg_terminate_backend(${pid}::int)`.execute(bed.api.db);
      await waitFor(async () => cache.lookup(1, refs) === null, 5000, "the lost connection to empty the cache");
      await waitFor(async () => (await listenerPids()).some((p) => !before.has(p) && p !== pid), 5000, "LISTEN again");
      assert.equal(cache.lookup(1, refs), null, "what was kept before the loss is gone");
      cache.store(1, entries(depot), cache.mark());
      assert.ok(cache.lookup(1, refs), "kept again once listening");
    } finally {
      await cache.stop();
    }
  });

  test("a read that started before an emptying is not kept; what does not exist is never kept", async () => {
    const cache = createCatalogueCache({ pool: bed.api.pool, logger: createLogger("catalogue-test", "silent") });
    const before = new Set(await listenerPids());
    cache.start();
    try {
      await waitFor(async () => (await listenerPids()).some((pid) => !before.has(pid)), 5000, "the cache to LISTEN");
      const mark = cache.mark();
      cache.clear();
      cache.store(1, entries(depot), mark);
      assert.equal(cache.lookup(1, refs), null, "read before the change: maybe stale");
      cache.store(2, entries(null), cache.mark());
      assert.equal(cache.lookup(2, refs), null, "no default place: read again each time");
      cache.store(3, entries(depot), cache.mark());
      assert.equal(cache.lookup(3, { ...refs, postalCodes: ["13001"] }), null, "a zone never read is not known");
      await sql`select pg_notify(${CATALOGUE_CHANNEL}, '')`.execute(bed.api.db);
      await waitFor(async () => cache.lookup(3, refs) === null, 5000, "a notification to empty the cache");
    } finally {
      await cache.stop();
    }
  });
});
