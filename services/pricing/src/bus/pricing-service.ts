/**
 * pricing on the bus: one NATS services-framework service (discoverable with `$SRV.PING`,
 * `$SRV.INFO`, `$SRV.STATS`) whose endpoints share a queue group, so replicas split the load;
 * and a plain subscription, outside any queue group, to tariff changes, so every replica drops
 * what it cached.
 */
import { compileValidator, jsonBody, type NatsNames, TariffsChanged } from "@dos/contracts";
import type { Logger } from "@dos/service-kit";
import type { NatsConnection, Status, Subscription } from "@nats-io/nats-core";
import { type Service, Svcm } from "@nats-io/services";
import type { TariffCache } from "../tariffs/tariff-cache.ts";
import type { TariffsService } from "../tariffs/tariffs.service.ts";
import { type BusHandle, busHandler } from "./bus-handler.ts";

/** Reported by `$SRV.INFO`; follows package.json. */
const SERVICE_VERSION = "0.1.0";

/**
 * @nats-io/services 3.0.0-25 is typed against its own pinned nats-core (3.0.0-50), whose
 * `Match` was an enum; at run time it only calls subscribe/publish/respond on the connection,
 * which behave the same on nats-core 3.4.0 (see test/pricing-bus.test.ts and the README).
 */
type SvcmConnection = ConstructorParameters<typeof Svcm>[0];

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
  service: Service;
  stop(): Promise<void>;
}

export async function startPricingBus(deps: PricingBusDeps): Promise<PricingBus> {
  const { nc, names, logger, cache } = deps;
  // Listen for changes before answering anything, so no quote is priced from a cache that missed one.
  const changes = watchTariffChanges(nc, names, cache, logger);
  const reconnects = clearCacheOnReconnect(nc, cache, logger);

  const { pricing } = names.services;
  const service = await new Svcm(nc as unknown as SvcmConnection).add({
    name: pricing.name,
    version: SERVICE_VERSION,
    description: "Quotes price_cents with an itemised breakdown from the account's tariff in force.",
    queue: pricing.queueGroup,
  });
  const endpoint = (name: string, subject: string, handle: BusHandle) =>
    service.addEndpoint(name, { subject, handler: busHandler(logger, name, handle) });
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
