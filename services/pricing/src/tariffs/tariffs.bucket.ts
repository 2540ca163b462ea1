/**
 * pricing's copy of each account's tariff versions in the TARIFFS KV bucket: delivery-api
 * watches it and prices from it while its own NATS connection is down (docs/spec-decisions.md,
 * "Pricing during a NATS outage"). An account is written after each version it commits and, at
 * boot, every account is, so an emptied or lost bucket is refilled. A write that fails is logged
 * and retried with a growing delay; it never fails the tariff creation, which has committed.
 *
 * Versions are append-only, so of two snapshots of one account the one with more versions is the
 * newer. A write replaces the key only when it adds versions, as a compare-and-set on the key's
 * revision: two replicas storing versions at once can never leave the older snapshot last.
 */
import { AccountTariffs, compileValidator, type NatsNames, tariffsKey } from "@dos/contracts";
import { type Logger, retry } from "@dos/service-kit";
import { type KV, type KvEntry, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Db } from "../db/database.ts";
import { listTariffAccounts, listTariffsByAccount, toTariffVersionEntry } from "./tariffs.repository.ts";

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;
/** Compare-and-set rounds lost to other writers before the account is left to the retry. */
const WRITE_ATTEMPTS = 5;

const validateEntry = compileValidator<AccountTariffs>(AccountTariffs);

export interface TariffsBucketWriter {
  /** Writes the account's versions in the background; never throws. */
  write(accountId: number): void;
  /** Writes every account's versions in the background (boot). */
  writeAll(): void;
  /** Resolves once nothing is left to write (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function createTariffsBucketWriter(deps: {
  db: Db;
  nc: NatsConnection;
  names: NatsNames;
  logger: Logger;
}): TariffsBucketWriter {
  const { db, logger } = deps;
  const pending = new Set<number>();
  let allPending = false;
  let kv: KV | undefined;
  let running: Promise<void> | undefined;
  const stopping = new AbortController();

  const writeAccount = async (store: KV, accountId: number) => {
    const entry: AccountTariffs = {
      account_id: accountId,
      versions: (await listTariffsByAccount(db, accountId)).map(toTariffVersionEntry),
    };
    const key = tariffsKey(accountId);
    let lastError: unknown;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await store.get(key);
      if (storedVersionCount(current) >= entry.versions.length) return;
      try {
        if (current) await store.update(key, JSON.stringify(entry), current.revision);
        else await store.create(key, JSON.stringify(entry));
        return;
      } catch (error) {
        // Most likely another replica wrote the key since we read it: look again.
        lastError = error;
      }
    }
    throw lastError;
  };

  const writePending = async () => {
    kv ??= await new Kvm(deps.nc).open(deps.names.buckets.tariffs);
    if (allPending) {
      for (const accountId of await listTariffAccounts(db)) pending.add(accountId);
      allPending = false;
    }
    for (const accountId of [...pending]) {
      // Taken off first: a version stored while this write reads asks for another write.
      pending.delete(accountId);
      await writeAccount(kv, accountId).catch((error: unknown) => {
        pending.add(accountId);
        throw error;
      });
    }
  };

  const run = async () => {
    while (!stopping.signal.aborted && (allPending || pending.size > 0)) {
      await retry(writePending, {
        backoff: { firstMs: RETRY_FIRST_MS, maxMs: RETRY_MAX_MS },
        signal: stopping.signal,
        onRetry: (error, _attempt, pauseMs) =>
          logger.warn(
            { err: error, accounts: pending.size, retryInMs: pauseMs },
            "TARIFFS bucket write failed; will retry",
          ),
      }).catch(() => {});
    }
  };

  const kick = () => {
    if (stopping.signal.aborted || running) return;
    running = run().finally(() => {
      running = undefined;
      // A write asked for while the last pass was ending.
      if (allPending || pending.size > 0) kick();
    });
  };

  return {
    write(accountId) {
      pending.add(accountId);
      kick();
    },
    writeAll() {
      allPending = true;
      kick();
    },
    async idle() {
      while (running) await running;
    },
    async stop() {
      stopping.abort();
      await running;
    },
  };
}

/** How many versions the key holds; -1 when it holds none that can be read (absent, deleted, malformed). */
function storedVersionCount(entry: KvEntry | null): number {
  if (entry?.operation !== "PUT") return -1;
  try {
    const checked = validateEntry(entry.json());
    return checked.ok ? checked.value.versions.length : -1;
  } catch {
    return -1;
  }
}
