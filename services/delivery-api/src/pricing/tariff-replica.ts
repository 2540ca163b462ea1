/**
 * delivery-api's replica of the tariffs, for pricing while its NATS connection is down
 * (docs/spec-decisions.md, "Pricing during a NATS outage"): the TARIFFS KV bucket, written by
 * the pricing service (one key per account, every version), is watched into memory. The watch
 * is re-opened from the last revision seen whenever it stops (a NATS outage ends it), and what
 * was read stays in memory meanwhile: that is the point.
 */
import {
  AccountTariffs,
  accountIdFromTariffsKey,
  compileValidator,
  natsNames,
  type TariffVersion,
  tariffVersionsOf,
} from "@dos/contracts";
import type { Logger } from "@dos/service-kit";
import { type KV, Kvm, type KvWatchEntry } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";

export interface TariffReplica {
  /** True once the bucket's content at start has been read; until then it cannot price. */
  readonly loaded: boolean;
  /** The account's versions as pricing last wrote them; none when the account has no tariff. */
  versions(accountId: number): readonly TariffVersion[];
  start(): void;
  stop(): Promise<void>;
}

const validateEntry = compileValidator<AccountTariffs>(AccountTariffs);
const RETRY_MS = 500;

export function createTariffReplica(options: { nc: NatsConnection; namespace: string; logger: Logger }): TariffReplica {
  const { logger } = options;
  const bucket = natsNames(options.namespace).buckets.tariffs;
  const accounts = new Map<number, TariffVersion[]>();
  let loaded = false;
  let stopped = false;
  let lastRevision = 0;
  let stopWatch: (() => void) | undefined;
  let loop: Promise<void> | undefined;

  const apply = (entry: KvWatchEntry) => {
    lastRevision = entry.revision;
    const accountId = accountIdFromTariffsKey(entry.key);
    if (accountId === null) return;
    if (entry.operation !== "PUT") {
      accounts.delete(accountId);
      return;
    }
    let value: unknown;
    try {
      value = entry.json();
    } catch {
      value = undefined;
    }
    const checked = validateEntry(value);
    if (!checked.ok || checked.value.account_id !== accountId) {
      // Kept as it was: pricing answers for this account while NATS is up anyway.
      logger.warn({ key: entry.key, revision: entry.revision }, "TARIFFS entry is malformed; ignored");
      return;
    }
    accounts.set(accountId, tariffVersionsOf(checked.value));
  };

  const finishLoad = () => {
    loaded = true;
    logger.info({ accounts: accounts.size }, "tariff replica loaded from the TARIFFS bucket");
  };

  const watchOnce = async (kv: KV) => {
    if (!loaded) {
      // A watch that broke during the first load starts over: its snapshot is incomplete.
      accounts.clear();
      lastRevision = 0;
    }
    // The bucket's message count tells whether an initial snapshot is coming at all.
    const initial = loaded ? 0 : (await kv.status()).values;
    const watch = await kv.watch({ resumeFromRevision: lastRevision > 0 ? lastRevision + 1 : undefined });
    stopWatch = () => watch.stop();
    if (initial === 0 && !loaded) finishLoad();
    for await (const entry of watch) {
      apply(entry);
      if (!loaded && entry.delta === 0) finishLoad();
    }
  };

  const run = async () => {
    let failing = false;
    while (!stopped) {
      try {
        await watchOnce(await new Kvm(options.nc).open(bucket));
        failing = false;
      } catch (error) {
        // Once per streak: during a NATS outage it fails every RETRY_MS.
        if (!stopped && !failing) logger.warn({ err: error }, "tariff replica watch failed; re-opening");
        failing = true;
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  };

  return {
    get loaded() {
      return loaded;
    },
    versions: (accountId) => accounts.get(accountId) ?? [],
    start() {
      loop ??= run();
    },
    async stop() {
      stopped = true;
      stopWatch?.();
      await loop;
    },
  };
}
