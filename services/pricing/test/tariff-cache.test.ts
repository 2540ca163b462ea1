/** The tariff cache: one load per account, invalidation wins over a load in flight, TTL bounds staleness. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TariffVersion } from "@dos/contracts";
import { createTariffCache } from "../src/tariffs/tariff-cache.ts";

const version = (id: number): TariffVersion => ({
  id,
  effectiveFrom: new Date(0),
  base_cents: { outbound: id, inbound: id, other: id },
  per_package_cents: 0,
  weight_bands: [],
  volume_bands: [],
  slot_surcharges: [],
  lead_time_surcharges: [],
  minimum_cents: 0,
});

/** A loader whose reads the test completes by hand, and that counts them. */
function manualLoader() {
  const pending: Array<(versions: TariffVersion[]) => void> = [];
  return {
    pending,
    load: (_accountId: number) => new Promise<TariffVersion[]>((resolve) => pending.push(resolve)),
  };
}

test("concurrent misses share one load, then answers come from memory synchronously", async () => {
  const loader = manualLoader();
  const cache = createTariffCache({ load: loader.load, ttlMs: 60_000 });
  const first = cache.versions(1);
  const second = cache.versions(1);
  assert.equal(loader.pending.length, 1);
  loader.pending[0]?.([version(1)]);
  assert.deepEqual(await first, [version(1)]);
  assert.deepEqual(await second, [version(1)]);
  assert.deepEqual(cache.versions(1), [version(1)]);
});

test("a load that started before an invalidation is not kept", async () => {
  const loader = manualLoader();
  const cache = createTariffCache({ load: loader.load, ttlMs: 60_000 });
  const stale = cache.versions(1);
  cache.invalidate(1);
  loader.pending[0]?.([version(1)]);
  await stale;
  assert.equal(cache.size, 0);
  const fresh = cache.versions(1);
  assert.equal(loader.pending.length, 2);
  loader.pending[1]?.([version(1), version(2)]);
  assert.deepEqual(await fresh, [version(1), version(2)]);
  assert.deepEqual(cache.versions(1), [version(1), version(2)]);
});

test("an entry older than the TTL is read again; clear() forgets every account", async () => {
  let clock = 0;
  const loader = manualLoader();
  const cache = createTariffCache({ load: loader.load, ttlMs: 1000, now: () => clock });
  const loaded = cache.versions(1);
  loader.pending[0]?.([]);
  await loaded;
  clock = 999;
  assert.deepEqual(cache.versions(1), []);
  clock = 1000;
  assert.ok(cache.versions(1) instanceof Promise);
  loader.pending[1]?.([]);
  await Promise.resolve();
  cache.clear();
  assert.equal(cache.size, 0);
});

test("beyond maxAccounts the cache starts over", async () => {
  const cache = createTariffCache({ load: async () => [], ttlMs: 60_000, maxAccounts: 2 });
  for (const account of [1, 2, 3]) await cache.versions(account);
  assert.equal(cache.size, 1);
});
