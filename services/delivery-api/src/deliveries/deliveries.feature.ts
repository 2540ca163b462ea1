/**
 * The deliveries feature assembled from its dependencies: the client routes (under /api/v2),
 * the operator routes (under /ops/v1), the outbox relay that publishes their events and the
 * catalogue cache their rules read through.
 */
import { natsNames } from "@dos/contracts";
import type { AppMetrics, Database, Logger, NatsHandle } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import { createOutboxRelay } from "../outbox/outbox.relay.ts";
import { outboxBacklog } from "../outbox/outbox.repository.ts";
import { createPricingClient } from "../pricing/pricing.client.ts";
import type { TariffReplica } from "../pricing/tariff-replica.ts";
import { createCatalogueLoader } from "./catalogue.repository.ts";
import { createCatalogueCache } from "./catalogue-cache.ts";
import { deliveriesOpsRoutes } from "./deliveries.ops-routes.ts";
import { deliveriesRoutes } from "./deliveries.routes.ts";
import { createDeliveriesService } from "./deliveries.service.ts";
import { createDeliveryStatusService } from "./delivery-status.service.ts";
import { deliveriesPortFor } from "./dispatch.adapter.ts";
import { firstEventRow, type NewDeliveryWrite } from "./new-deliveries.repository.ts";
import { createNewDeliveryWriter } from "./new-delivery-writer.ts";
import { createRedeliveryService } from "./redelivery.service.ts";

export interface DeliveriesFeatureDeps {
  config: Config;
  db: Kysely<DB>;
  database: Database<unknown>;
  nats: NatsHandle;
  logger: Logger;
  metrics: AppMetrics;
  /** Prices from while NATS is down (see pricing.client.ts). */
  tariffReplica: TariffReplica;
}

export function createDeliveriesFeature({
  config,
  db,
  database,
  nats,
  logger,
  metrics,
  tariffReplica,
}: DeliveriesFeatureDeps) {
  const pricing = createPricingClient({
    nc: nats.nc,
    namespace: config.NATS_NAMESPACE,
    timeoutMs: config.API_PRICING_TIMEOUT_MS,
    gatherMs: config.API_PRICING_GATHER_MS,
    logger,
    replica: tariffReplica,
    metrics,
  });
  const relay = createOutboxRelay({
    db,
    pool: database.pool,
    nc: nats.publisher,
    logger: logger.child({ component: "outbox-relay" }),
    pollMs: config.API_OUTBOX_POLL_MS,
  });
  // New deliveries' first events are published by this process right after their commit.
  const committed = (writes: NewDeliveryWrite[]) => relay.publishCommitted(writes.map(firstEventRow));
  const catalogueCache = createCatalogueCache({
    pool: database.pool,
    logger: logger.child({ component: "catalogue" }),
  });
  const deps = {
    db,
    pricing,
    names: natsNames(config.NATS_NAMESPACE),
    catalogues: createCatalogueLoader(db, database.pool, catalogueCache),
    writer: createNewDeliveryWriter(db, database.pool, committed),
    committed,
    trackingBaseUrl: `${config.API_PUBLIC_URL.replace(/\/+$/, "")}/track`,
    created: metrics.counter("deliveries_created_total", "Deliveries created through the client API (replays aside)."),
  };
  registerOutboxGauges(db, metrics);
  const deliveries = createDeliveriesService(deps);
  const redeliveries = createRedeliveryService(deps);
  const statuses = createDeliveryStatusService(deps);
  return {
    relay,
    /** Started and stopped with the background work; emptied by the operator routes that change a catalogue. */
    catalogueCache,
    /** What dispatch needs of deliveries: lock one, start its tasks, change its status. */
    dispatchPort: deliveriesPortFor(deps),
    statuses,
    /** Register inside the authenticated /api/v2 context. */
    clientRoutes: (app: FastifyInstance) => deliveriesRoutes(app, { deliveries, redeliveries }),
    /** Register inside the /ops/v1 context. */
    opsRoutes: (app: FastifyInstance) => deliveriesOpsRoutes(app, { statuses }),
  };
}

/**
 * Measured at each scrape (one query on the partial index of unpublished rows, shared by both
 * gauges): what waits for the relay, and for how long. Every replica reports the same table;
 * the alerts take the max.
 */
function registerOutboxGauges(db: Kysely<DB>, metrics: AppMetrics) {
  let reading: Promise<{ backlog: number; oldestAgeSeconds: number }> | undefined;
  const read = () => {
    reading ??= outboxBacklog(db).finally(() => {
      reading = undefined;
    });
    return reading;
  };
  metrics.gauge("outbox_backlog", "Delivery events written and not yet published to NATS.", [], async (gauge) => {
    gauge.set((await read()).backlog);
  });
  metrics.gauge(
    "outbox_oldest_age_seconds",
    "Age of the oldest delivery event not yet published (0 when none waits).",
    [],
    async (gauge) => {
      gauge.set((await read()).oldestAgeSeconds);
    },
  );
}
