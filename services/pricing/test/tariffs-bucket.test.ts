/**
 * pricing keeps each account's tariff versions in the TARIFFS bucket (what delivery-api prices
 * from while NATS is down): written after each version, refilled at boot, and never left with
 * an older snapshot when two replicas store versions at once.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type AccountTariffs, ensureTopology, SERVICE_ERROR_HEADERS, type Tariff, tariffsKey } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { type KV, Kvm } from "@nats-io/kv";
import { createPricingHarness, type PricingHarness } from "./pricing-harness.ts";

let harness: PricingHarness;
let bucket: KV;

before(async () => {
  harness = await createPricingHarness("pricing_bucket");
  await harness.startReplica();
  await harness.startReplica();
  bucket = await new Kvm(harness.client.nc).open(harness.names.buckets.tariffs);
});
after(async () => {
  await harness.close();
});

const rules = (outbound: number) => ({ base_cents: { outbound, inbound: 800, other: 1200 }, per_package_cents: 50 });

/** Over the bus: the queue group hands each create to either replica. */
async function createTariff(body: Record<string, unknown>): Promise<Tariff> {
  const msg = await harness.client.nc.request(harness.names.subjects.pricingTariffsCreate, JSON.stringify(body), {
    timeout: 5000,
  });
  assert.equal(msg.headers?.get(SERVICE_ERROR_HEADERS.code) ?? "", "", msg.string());
  return msg.json<Tariff>();
}

async function stored(accountId: number): Promise<AccountTariffs | null> {
  const entry = await bucket.get(tariffsKey(accountId));
  return entry?.operation === "PUT" ? entry.json<AccountTariffs>() : null;
}

const versionIds = (entry: AccountTariffs | null) => entry?.versions.map((v) => v.id).sort((a, b) => a - b) ?? [];

test("a stored version is written to the account's key, with every earlier version", async () => {
  const first = await createTariff({ account_id: 501, ...rules(900) });
  await waitFor(async () => versionIds(await stored(501)).length === 1, 5000, "first version in the bucket");
  const entry = await stored(501);
  assert.deepEqual(entry, {
    account_id: 501,
    versions: [
      {
        id: first.id,
        effective_from: first.effective_from,
        base_cents: first.base_cents,
        per_package_cents: 50,
        weight_bands: [],
        volume_bands: [],
        slot_surcharges: [],
        lead_time_surcharges: [],
        minimum_cents: 0,
      },
    ],
  });

  const later = new Date(Date.now() + 3_600_000).toISOString();
  const second = await createTariff({ account_id: 501, effective_from: later, ...rules(1500) });
  await waitFor(async () => versionIds(await stored(501)).length === 2, 5000, "second version in the bucket");
  assert.deepEqual(
    versionIds(await stored(501)),
    [first.id, second.id].sort((a, b) => a - b),
  );
  assert.equal(await stored(502), null, "an account without tariffs has no key");
});

test("versions stored at once through both replicas all end up in the key", async () => {
  const starts = Array.from({ length: 8 }, (_, i) => new Date(Date.now() + (i + 1) * 3_600_000).toISOString());
  const created = await Promise.all(
    starts.map((effective_from, i) => createTariff({ account_id: 503, effective_from, ...rules(1000 + i) })),
  );
  const all = created.map((t) => t.id).sort((a, b) => a - b);
  await waitFor(async () => versionIds(await stored(503)).length === all.length, 5000, "all versions in the bucket");
  assert.deepEqual(versionIds(await stored(503)), all);
});

test("a replica that boots refills an emptied bucket", async () => {
  await createTariff({ account_id: 504, ...rules(700) });
  await waitFor(async () => (await stored(504)) !== null, 5000, "written");
  const before = await stored(501);
  for await (const key of await bucket.keys()) await bucket.purge(key);
  assert.equal(await stored(504), null);

  await harness.startReplica();
  await waitFor(async () => (await stored(504)) !== null && (await stored(501)) !== null, 5000, "refilled");
  assert.deepEqual(await stored(501), before);
  assert.equal((await stored(504))?.versions.length, 1);
});

test("a version stored while the bucket is missing is still created, and written once the bucket is back", async () => {
  await new Kvm(harness.client.nc).open(harness.names.buckets.tariffs).then((kv) => kv.destroy());
  const tariff = await createTariff({ account_id: 505, ...rules(600) });
  assert.equal(tariff.account_id, 505, "the creation answered despite the failed write");

  await ensureTopology(harness.client.nc, { namespace: harness.namespace });
  bucket = await new Kvm(harness.client.nc).open(harness.names.buckets.tariffs);
  await waitFor(async () => versionIds(await stored(505))[0] === tariff.id, 10_000, "written by the retry");
});
