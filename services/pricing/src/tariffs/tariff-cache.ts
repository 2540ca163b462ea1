/**
 * Tariff versions per account, held in memory so a quote does not touch PostgreSQL.
 *
 * Freshness: every replica drops an account's entry when a `pricingTariffsChanged` broadcast
 * arrives (see tariff-changes.ts), drops everything after a NATS reconnect (broadcasts sent
 * meanwhile are lost), and reloads an entry older than the TTL as a last safety net.
 * A load that started before an invalidation is not stored, so a slow read can never put
 * back versions older than the change that was just announced.
 */
import type { TariffVersion } from "@dos/contracts";

export interface TariffCache {
  /** The account's versions: synchronously when cached and fresh, else a load from PostgreSQL. */
  versions(accountId: number): TariffVersion[] | Promise<TariffVersion[]>;
  invalidate(accountId: number): void;
  clear(): void;
  readonly size: number;
}

export interface TariffCacheOptions {
  load(accountId: number): Promise<TariffVersion[]>;
  ttlMs: number;
  /** Beyond this many accounts the cache starts over, so memory stays bounded. */
  maxAccounts?: number;
  now?: () => number;
}

interface Entry {
  versions: TariffVersion[];
  loadedAt: number;
}

export function createTariffCache(options: TariffCacheOptions): TariffCache {
  const now = options.now ?? Date.now;
  const maxAccounts = options.maxAccounts ?? 100_000;
  const entries = new Map<number, Entry>();
  const loading = new Map<number, Promise<TariffVersion[]>>();
  // Bumped by each invalidation; a load stores its result only if nothing was invalidated meanwhile.
  let generation = 0;

  const load = (accountId: number): Promise<TariffVersion[]> => {
    const startedAt = generation;
    const promise = options
      .load(accountId)
      .then((versions) => {
        if (generation === startedAt) {
          if (entries.size >= maxAccounts) entries.clear();
          entries.set(accountId, { versions, loadedAt: now() });
        }
        return versions;
      })
      .finally(() => {
        if (loading.get(accountId) === promise) loading.delete(accountId);
      });
    loading.set(accountId, promise);
    return promise;
  };

  return {
    versions(accountId) {
      const entry = entries.get(accountId);
      if (entry && now() - entry.loadedAt < options.ttlMs) return entry.versions;
      return loading.get(accountId) ?? load(accountId);
    },
    invalidate(accountId) {
      generation++;
      entries.delete(accountId);
      loading.delete(accountId);
    },
    clear() {
      generation++;
      entries.clear();
      loading.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
