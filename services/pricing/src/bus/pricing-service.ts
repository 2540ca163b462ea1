/**
 * pricing on the bus: one NATS services-framework service (discoverable with `$SRV.PING`,
 * `$SRV.INFO`, `$SRV.STATS`) whose endpoints share a queue group, so replicas split the load;
 * and a plain subscription, outside any queue group, to tariff changes, so every replica drops
 * what it cached.
 */
import { compileValidator, jsonBody, type NatsNames, SERVICE_NAMES, TariffsChanged } from "@dos/contracts";
import { type Logger, type NatsService, startJsonService } from "@dos/service-kit";
import type { NatsConnection, Status, Subscription } from "@nats-io/nats-core";
import type { TariffCache } from "../tariffs/tariff-cache.ts";
import type { TariffsService } from "../tariffs/tariffs.service.ts";

/** Reported by `$SRV.INFO`; follows package.json. */
const SERVICE_VERSION = "0.1.0";

/** Handles one decoded request; throws an HttpError to refuse it. A synchronous answer skips a promise. */
export type BusHandle = (message: unknown) => unknown;

const validateChanged = compileValidator<TariffsChanged>(TariffsChanged);

export interface PricingBusDeps {
  nc: NatsConnection;
  names: NatsNames;
  logger: Logger;
  cache: TariffCache;
  quote: BusHandle;
  tariffs: TariffsService;
}

export interface PricingBus {
  service: NatsService;
  stop(): Promise<void>;
}

export async function startPricingBus(deps: PricingBusDeps): Promise<PricingBus> {
  const { nc, names, logger, cache } = deps;
  // Listen for changes before answering anything, so no quote is priced from a cache that missed one.
  const changes = watchTariffChanges(nc, names, cache, logger);
  const reconnects = clearCacheOnReconnect(nc, cache, logger);

  const { pricing } = names.services;
  const { service, endpoint } = await startJsonService({
    nc,
    name: pricing.name,
    version: SERVICE_VERSION,
    description: "Quotes price_cents with an itemised breakdown from the account's tariff in force.",
    queue: pricing.queueGroup,
    logger,
    tracer: SERVICE_NAMES.pricing,
    unavailable: "pricing storage is temporarily unavailable",
  });
  endpoint("quote", pricing.quoteSubject, deps.quote);
  endpoint("tariffs-create", names.subjects.pricingTariffsCreate, deps.tariffs.create);
  endpoint("tariffs-list", names.subjects.pricingTariffsList, deps.tariffs.list);
  endpoint("tariffs-get", names.subjects.pricingTariffsGet, deps.tariffs.get);
  service.stopped.then((error) => {
    if (error) logger.error({ err: error }, "pricing service stopped by an error; readiness is now false");
  });
  await nc.flush();
  logger.info({ nats_service: pricing.name, quote: pricing.quoteSubject }, "pricing service listening");

  return {
    service,
    async stop() {
      // In-flight handlers finish; the connection's drain (after this) flushes their replies.
      if (!service.isStopped) await service.stop();
      changes.unsubscribe();
      reconnects.stop();
    },
  };
}

function watchTariffChanges(nc: NatsConnection, names: NatsNames, cache: TariffCache, logger: Logger): Subscription {
  return nc.subscribe(names.subjects.pricingTariffsChanged, {
    // A callback runs in message order with the endpoints' callbacks on this connection, so the
    // entry is gone before any quote that follows the change is handled.
    callback: (error, msg) => {
      if (error) {
        logger.error({ err: error }, "tariff change subscription failed; clearing the cache");
        cache.clear();
        return;
      }
      const change = validateChanged(jsonBody(msg));
      if (change.ok) cache.invalidate(change.value.account_id);
      else cache.clear();
    },
  });
}

/** Changes broadcast while this replica was disconnected are lost to it: forget everything. */
function clearCacheOnReconnect(nc: NatsConnection, cache: TariffCache, logger: Logger) {
  // The iterator is a QueuedIterator at run time; its type only promises AsyncIterable.
  const statuses = nc.status() as AsyncIterable<Status> & { stop(): void };
  (async () => {
    for await (const status of statuses) {
      if (status.type === "reconnect") {
        cache.clear();
        logger.info("NATS reconnected: tariff cache cleared");
      }
    }
  })().catch(() => {});
  return statuses;
}
