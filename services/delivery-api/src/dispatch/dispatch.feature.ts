/**
 * Dispatch and tracking assembled: messengers, vehicles, rounds and tasks (operator API), the
 * fleet relay, the position consumer and ETAs, the SMS dispatcher, the public tracking page and
 * the test-environment courier simulator. Background work starts after listen and stops after
 * the HTTP server closed.
 */
import type { Database, Logger, NatsHandle } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import { boardOpsRoutes } from "./board/board.ops-routes.ts";
import type { DeliveriesPort } from "./deliveries.port.ts";
import { createFleetRelay } from "./fleet/fleet.relay.ts";
import { liveOpsRoutes } from "./live/live.ops-routes.ts";
import { messengersOpsRoutes } from "./messengers/messengers.ops-routes.ts";
import { createPositionsConsumer } from "./positions/positions.consumer.ts";
import { createPositionsService } from "./positions/positions.service.ts";
import { dispatchOpsRoutes } from "./rounds/dispatch.ops-routes.ts";
import { createRoundsService } from "./rounds/rounds.service.ts";
import { createTasksService } from "./rounds/tasks.service.ts";
import { simulatorOpsRoutes } from "./simulator/simulator.ops-routes.ts";
import { createCourierSimulator } from "./simulator/simulator.ts";
import { createSmsDispatcher } from "./sms/sms.outbox.ts";
import { type SmsSender, smsSenderFromConfig } from "./sms/sms.sender.ts";
import { trackingRoutes } from "./tracking/tracking.routes.ts";
import { createTrackingService } from "./tracking/tracking.service.ts";
import { createTrackingStreams } from "./tracking/tracking-streams.ts";
import { createVehicleTrackBus } from "./vehicles/vehicle-track.bus.ts";
import { vehiclesOpsRoutes } from "./vehicles/vehicles.ops-routes.ts";

export interface DispatchFeatureDeps {
  config: Config;
  db: Kysely<DB>;
  database: Database<unknown>;
  nats: NatsHandle;
  logger: Logger;
  /** The deliveries feature, as far as dispatch reaches it. */
  deliveries: DeliveriesPort;
  /** Tests pass their own adapter; otherwise API_SMS_PROVIDER chooses. */
  smsSender?: SmsSender;
}

export function createDispatchFeature(deps: DispatchFeatureDeps) {
  const { config, db, logger } = deps;
  const publicUrl = config.API_PUBLIC_URL.replace(/\/+$/, "");
  const positions = createPositionsService(db, config);
  const sms = createSmsDispatcher({
    db,
    sender: deps.smsSender ?? smsSenderFromConfig(config, logger),
    logger: logger.child({ component: "sms" }),
    retryMs: config.API_SMS_RETRY_MS,
  });
  const fleet = createFleetRelay({
    db,
    pool: deps.database.pool,
    nc: deps.nats.publisher,
    namespace: config.NATS_NAMESPACE,
    logger: logger.child({ component: "fleet-relay" }),
    pollMs: config.API_OUTBOX_POLL_MS,
  });
  const track = createVehicleTrackBus({
    nc: deps.nats.nc,
    namespace: config.NATS_NAMESPACE,
    logger: logger.child({ component: "vehicle-track" }),
  });
  const rounds = createRoundsService({ db, deliveries: deps.deliveries, positions });
  const tasks = createTasksService({
    db,
    deliveries: deps.deliveries,
    positions,
    mediaBaseUrl: `${publicUrl}/media`,
    onSmsRecorded: () => void sms.sendDue(),
  });
  const consumer = createPositionsConsumer({
    nc: deps.nats.nc,
    namespace: config.NATS_NAMESPACE,
    positions,
    logger: logger.child({ component: "positions" }),
  });
  const simulator = createCourierSimulator({
    db,
    rounds,
    tasks,
    positions,
    logger: logger.child({ component: "courier-simulator" }),
    tickMs: config.API_SIMULATOR_TICK_MS,
  });
  const tracking = createTrackingService(db, positions, config.API_TRACKING_TTL_MS);
  const trackingStreams = createTrackingStreams({
    read: tracking.states,
    pushMs: config.API_TRACKING_PUSH_MS,
    heartbeatMs: config.API_TRACKING_HEARTBEAT_MS,
    maxLifetimeMs: config.API_TRACKING_STREAM_MAX_MS,
    perToken: config.API_TRACKING_STREAMS_PER_TOKEN,
    perAddress: config.API_TRACKING_STREAMS_PER_ADDRESS,
    logger: logger.child({ component: "tracking-streams" }),
  });

  return {
    fleet,
    sms,
    simulator,
    positions,
    /** Register inside the /ops/v1 context. */
    async opsRoutes(app: FastifyInstance) {
      await app.register(messengersOpsRoutes, { db });
      await app.register(vehiclesOpsRoutes, { db, track });
      await app.register(simulatorOpsRoutes, { db });
      await app.register(boardOpsRoutes, { db });
      await app.register(liveOpsRoutes, { db, trackerFreshMs: config.API_TRACKER_FRESH_MS });
      await app.register(dispatchOpsRoutes, {
        db,
        rounds,
        tasks,
        positions,
        fleet,
        mediaMaxBytes: config.API_MEDIA_MAX_BYTES,
      });
    },
    /** Public: the tracking page and proof images. */
    publicRoutes: (app: FastifyInstance) => trackingRoutes(app, { tracking, streams: trackingStreams }),
    trackingStreams,
    start() {
      fleet.start();
      sms.start();
      consumer.start();
      simulator.start();
    },
    async stop() {
      await simulator.stop();
      await consumer.stop();
      await sms.stop();
      await fleet.stop();
    },
  };
}
