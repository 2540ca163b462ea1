/**
 * The deliveries feature assembled from its dependencies: the client routes (under /api/v2),
 * the operator routes (under /ops/v1) and the outbox relay that publishes their events.
 */
import { natsNames } from "@dos/contracts";
import type { Database, Logger, NatsHandle } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import { createOutboxRelay } from "../outbox/outbox.relay.ts";
import { createPricingClient } from "../pricing/pricing.client.ts";
import { createCatalogueLoader } from "./catalogue.repository.ts";
import { deliveriesOpsRoutes } from "./deliveries.ops-routes.ts";
import { deliveriesRoutes } from "./deliveries.routes.ts";
import { createDeliveriesService } from "./deliveries.service.ts";
import { createDeliveryStatusService } from "./delivery-status.service.ts";
import { createNewDeliveryWriter } from "./new-delivery-writer.ts";
import { createRedeliveryService } from "./redelivery.service.ts";

export interface DeliveriesFeatureDeps {
  config: Config;
  db: Kysely<DB>;
  database: Database<unknown>;
  nats: NatsHandle;
  logger: Logger;
}

export function createDeliveriesFeature({ config, db, database, nats, logger }: DeliveriesFeatureDeps) {
  const pricing = createPricingClient({
    nc: nats.nc,
    namespace: config.NATS_NAMESPACE,
    timeoutMs: config.API_PRICING_TIMEOUT_MS,
    logger,
  });
  const deps = {
    db,
    pricing,
    names: natsNames(config.NATS_NAMESPACE),
    catalogues: createCatalogueLoader(db, database.pool),
    writer: createNewDeliveryWriter(db, database.pool),
    trackingBaseUrl: `${config.API_PUBLIC_URL.replace(/\/+$/, "")}/track`,
  };
  const deliveries = createDeliveriesService(deps);
  const redeliveries = createRedeliveryService(deps);
  const statuses = createDeliveryStatusService(deps);
  const relay = createOutboxRelay({
    db,
    pool: database.pool,
    nc: nats.nc,
    logger: logger.child({ component: "outbox-relay" }),
    pollMs: config.API_OUTBOX_POLL_MS,
  });
  return {
    relay,
    /** What other features need to change a delivery's status and record its events. */
    writeDeps: deps,
    statuses,
    /** Register inside the authenticated /api/v2 context. */
    clientRoutes: (app: FastifyInstance) => deliveriesRoutes(app, { deliveries, redeliveries }),
    /** Register inside the /ops/v1 context. */
    opsRoutes: (app: FastifyInstance) => deliveriesOpsRoutes(app, { statuses }),
  };
}
