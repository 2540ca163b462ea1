/** Builds geo-ingest from its dependencies; never listens (main.ts does, tests use inject). */
import { SERVICE_NAMES } from "@dos/contracts";
import { type BuiltService, createHttpApp, type ServiceDeps } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { Config } from "./config.ts";
import { createFleetCache, type FleetCache } from "./fleet/fleet.cache.ts";
import { registerGeolocationRoutes } from "./geolocations/geolocations.routes.ts";
import { createGeolocationsService } from "./geolocations/geolocations.service.ts";
import { createRateLimiter } from "./geolocations/rate-limiter.ts";
import { createGeoMetrics } from "./metrics.ts";
import { startTrackBus } from "./ops/track.bus.ts";
import { registerTrackRoutes } from "./ops/track.routes.ts";
import { createLatestPublisher } from "./positions/latest-publisher.ts";
import { createPositionWriter } from "./positions/position-writer.ts";
import type { DB } from "./positions/positions.table.ts";
import { createStorageMaintenance } from "./storage/storage-maintenance.ts";

/** The built service; `fleet` is exposed so tests and benchmarks can wait for a KV update to land. */
export interface GeoIngest extends BuiltService {
  fleet: FleetCache;
}

export async function buildApp(deps: ServiceDeps<Config>): Promise<GeoIngest> {
  const { config, logger } = deps;
  const db = deps.database.db as Kysely<DB>;
  const fleet = createFleetCache(deps.nats.nc, config.NATS_NAMESPACE, logger);
  const http = createHttpApp({
    service: SERVICE_NAMES.geoIngest,
    logger,
    lifecycle: deps.lifecycle,
    timeouts: deps.config,
    bodyLimit: 16 * 1024,
    trustedProxies: deps.config.TRUSTED_PROXIES,
    checks: { nats: deps.nats.check, fleet: fleet.check },
    database: deps.database,
  });
  const { app } = http;
  const metrics = createGeoMetrics(http.metrics);

  const maintenance = await createStorageMaintenance(deps.database.db, logger, {
    retentionDays: config.GEO_RETENTION_DAYS,
    aheadDays: config.GEO_PARTITIONS_AHEAD_DAYS,
    intervalMs: config.GEO_MAINTENANCE_INTERVAL_MS,
  });
  const publisher = createLatestPublisher({
    nc: deps.nats.nc,
    namespace: config.NATS_NAMESPACE,
    intervalMs: config.GEO_PUBLISH_INTERVAL_MS,
    logger,
    vehicle: (id) => fleet.get(id),
    onTick(published) {
      metrics.published.inc(published);
      metrics.fleetVehicles.set(fleet.size);
      metrics.fleetActive.set(fleet.activeCount);
      metrics.writeQueue.set(writer.queued);
    },
  });
  const writer = createPositionWriter(
    deps.database.pool,
    {
      maxRows: config.GEO_BATCH_MAX_ROWS,
      maxDelayMs: config.GEO_BATCH_MAX_DELAY_MS,
      concurrency: config.GEO_WRITE_CONCURRENCY,
      queueLimit: config.GEO_WRITE_QUEUE_LIMIT,
    },
    { logger, metrics, onCommitted: (rows) => publisher.offer(rows) },
  );
  const limiter = createRateLimiter(config.GEO_RATE_LIMIT_INTERVAL_MS);
  const service = createGeolocationsService(
    { fleet, limiter, writer, metrics },
    {
      futureToleranceMs: config.GEO_FUTURE_TOLERANCE_MS,
      retentionDays: config.GEO_RETENTION_DAYS,
      rateLimitIntervalMs: config.GEO_RATE_LIMIT_INTERVAL_MS,
    },
  );
  registerGeolocationRoutes(http, service, config.LOG_LEVEL);
  if (config.GEO_OPS_TOKEN) registerTrackRoutes(app, db, config.GEO_OPS_TOKEN);
  let trackBus: Awaited<ReturnType<typeof startTrackBus>> | undefined;

  return {
    app,
    fleet,
    async start() {
      await maintenance.runOnce();
      maintenance.start();
      publisher.start();
      await fleet.start();
      trackBus = await startTrackBus({ nc: deps.nats.nc, namespace: config.NATS_NAMESPACE, db, logger });
    },
    async stop() {
      await trackBus?.stop().catch(() => {});
      // The HTTP server has closed: every accepted position is in the writer; commit them all.
      await writer.drain();
      await publisher.stop();
      maintenance.stop();
      await fleet.stop();
    },
  };
}
