/**
 * delivery-api's replica of the tariffs, for pricing while its NATS connection is down
 * (docs/spec-decisions.md, "Pricing during a NATS outage"): the TARIFFS KV bucket, written by
 * the pricing service (one key per account, every version), is mirrored into memory by the
 * kit's KV mirror, and what was read stays in memory during an outage: that is the point.
 */
import {
  AccountTariffs,
  accountIdFromTariffsKey,
  compileValidator,
  jsonBody,
  natsNames,
  type TariffVersion,
  tariffVersionsOf,
} from "@dos/contracts";
import { createKvMirror, type Logger } from "@dos/service-kit";
import type { KvWatchEntry } from "@nats-io/kv";
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

export function createTariffReplica(options: { nc: NatsConnection; namespace: string; logger: Logger }): TariffReplica {
  const { logger } = options;
  const bucket = natsNames(options.namespace).buckets.tariffs;
  const accounts = new Map<number, TariffVersion[]>();

  const apply = (entry: KvWatchEntry) => {
    const accountId = accountIdFromTariffsKey(entry.key);
    if (accountId === null) return;
    if (entry.operation !== "PUT") {
      accounts.delete(accountId);
      return;
    }
    const checked = validateEntry(jsonBody(entry));
    if (!checked.ok || checked.value.account_id !== accountId) {
      // Kept as it was: pricing answers for this account while NATS is up anyway.
      logger.warn({ key: entry.key, revision: entry.revision }, "TARIFFS entry is malformed; ignored");
      return;
    }
    accounts.set(accountId, tariffVersionsOf(checked.value));
  };

  const mirror = createKvMirror({
    nc: options.nc,
    bucket,
    logger,
    label: "tariff replica",
    apply,
    clear: () => accounts.clear(),
    onLoaded: () => logger.info({ accounts: accounts.size }, "tariff replica loaded from the TARIFFS bucket"),
  });

  return {
    get loaded() {
      return mirror.loaded;
    },
    versions: (accountId) => accounts.get(accountId) ?? [],
    start() {
      void mirror.start();
    },
    stop: () => mirror.stop(),
  };
}
