/**
 * What creates read of each account's catalogue (its default place, and the saved addresses,
 * package types and zones bodies name), kept in memory per replica, so that a create whose
 * entries are known reads nothing before it is priced: no round trip, and none of the 0.25 ms of
 * PostgreSQL CPU a catalogue read alone costs (a quarter of PostgreSQL's CPU per create at a
 * steady rate).
 *
 * Freshness: every change to places, zones or package types notifies `delivery_catalogue` (a
 * trigger, migrations/0006), and the notification empties the cache of every replica; the
 * operator routes that change the catalogue also empty their own replica's before answering.
 * The cache serves only while its LISTEN connection is up: lost, nothing is served from it (every
 * read goes to PostgreSQL) until LISTEN is back and the cache has been emptied. A read that
 * started before an emptying is not stored, so a slow read can never bring back what a change
 * replaced. Only what exists is kept (a postal code outside the zones, an unknown type, no default
 * place are read again each time), and an entry is kept at most `ttlMs` as a last safety net.
 */
import type { Logger, Pool } from "@dos/service-kit";
import { createListenLoop } from "../outbox/listen-loop.ts";
import type { PlaceData } from "./delivery-draft.ts";
import type { BodyReferences, CatalogueType } from "./rule-context.ts";

/** The channel migrations/0006 notifies at every change of a catalogue table. */
export const CATALOGUE_CHANNEL = "delivery_catalogue";

/** An account's catalogue as a create reads it (the parts a body names). */
export interface CatalogueEntries {
  defaultPlace: PlaceData | null;
  savedAddresses: Map<number, PlaceData>;
  packageTypes: Map<number, CatalogueType>;
  zones: Map<string, { latitude: number; longitude: number }>;
}

interface AccountEntry extends CatalogueEntries {
  defaultPlace: PlaceData;
  storedAt: number;
}

export interface CatalogueCache {
  /** The account's entries for these references when every one is cached, else null. */
  lookup(accountId: number, refs: BodyReferences): CatalogueEntries | null;
  /** A mark to hand to `store`: what was read after it may be stored. */
  mark(): number;
  /** Keeps what a read found, unless the cache was emptied since `mark` (the read may be stale). */
  store(accountId: number, entries: CatalogueEntries, mark: number): void;
  /** Empties the cache (a change of the catalogue made here). */
  clear(): void;
  start(): void;
  stop(): Promise<void>;
}

export interface CatalogueCacheOptions {
  pool: Pool;
  logger: Logger;
  /** The last safety net: an account's entries are read again after this long. */
  ttlMs?: number;
  /** Beyond this many accounts the cache starts over, so memory stays bounded. */
  maxAccounts?: number;
  now?: () => number;
}

const TTL_MS = 60_000;
const MAX_ACCOUNTS = 10_000;
/** How soon a lost LISTEN connection is tried again. */
const RELISTEN_MS = 1000;

export function createCatalogueCache(options: CatalogueCacheOptions): CatalogueCache {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? TTL_MS;
  const maxAccounts = options.maxAccounts ?? MAX_ACCOUNTS;
  const accounts = new Map<number, AccountEntry>();
  let listening = false;
  // Bumped at each emptying; a read stores its result only if none happened since it started.
  let generation = 0;

  const clear = () => {
    generation++;
    accounts.clear();
  };

  const loop = createListenLoop({
    pool: options.pool,
    channel: CATALOGUE_CHANNEL,
    pollMs: RELISTEN_MS,
    logger: options.logger,
    pass: async () => undefined,
    onListen() {
      // Changes made while nobody listened are unknown: start from nothing.
      clear();
      listening = true;
    },
    onLost() {
      listening = false;
      clear();
    },
    onNotification: clear,
  });

  return {
    lookup(accountId, refs) {
      if (!listening) return null;
      const entry = accounts.get(accountId);
      if (!entry) return null;
      if (now() - entry.storedAt >= ttlMs) {
        accounts.delete(accountId);
        return null;
      }
      const known =
        refs.savedAddressIds.every((id) => entry.savedAddresses.has(id)) &&
        refs.packageTypeIds.every((id) => entry.packageTypes.has(id)) &&
        refs.postalCodes.every((code) => entry.zones.has(code));
      return known ? entry : null;
    },
    mark: () => generation,
    store(accountId, entries, mark) {
      if (!listening || mark !== generation || entries.defaultPlace === null) return;
      let entry = accounts.get(accountId);
      if (!entry || now() - entry.storedAt >= ttlMs) {
        if (accounts.size >= maxAccounts) accounts.clear();
        entry = {
          defaultPlace: entries.defaultPlace,
          savedAddresses: new Map(),
          packageTypes: new Map(),
          zones: new Map(),
          storedAt: now(),
        };
        accounts.set(accountId, entry);
      }
      for (const [id, place] of entries.savedAddresses) entry.savedAddresses.set(id, place);
      for (const [id, type] of entries.packageTypes) entry.packageTypes.set(id, type);
      for (const [code, zone] of entries.zones) entry.zones.set(code, zone);
    },
    clear,
    start: () => loop.start(),
    async stop() {
      await loop.stop();
      listening = false;
      clear();
    },
  };
}
