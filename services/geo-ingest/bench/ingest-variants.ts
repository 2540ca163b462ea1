/**
 * The four servers the ingest benchmark compares, each listening on its own loopback port:
 * the bare Fastify ceiling, the kit's app doing nothing, geo-ingest, and a naive variant.
 */
import { GeolocationInput, SERVICE_NAMES } from "@dos/contracts";
import {
  createDatabase,
  createHttpApp,
  createLifecycle,
  createLogger,
  type Database,
  loadConfig,
} from "@dos/service-kit";
import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyInstance } from "fastify";
import { SCHEMA } from "../migrations/index.ts";
import { buildApp } from "../src/app.ts";
import { CONFIG_PREFIX, configSchema } from "../src/config.ts";
import type { BenchInfra } from "./bench-kit.ts";

export interface Variant {
  key: string;
  name: string;
  app: FastifyInstance;
  /** Vehicles it knows are named `${prefix}${n}`. */
  prefix: string;
  /** True when the variant stores positions (then every 200 must be a row). */
  stores: boolean;
  close(): Promise<void>;
}

const ROUTE = "/external/vehicles/:vehicle_id/geolocations";
const Params = Type.Object({ vehicle_id: Type.String({ minLength: 1 }) });
const schema = { params: Params, body: GeolocationInput };
const quiet = createLogger(SERVICE_NAMES.geoIngest, "warn");

/** The ceiling: parsing, routing and the same schema validation, nothing else. */
export function bareVariant(): Variant {
  const app = Fastify({ logger: false });
  app.post(ROUTE, { schema }, (_request, reply) => reply.code(200).send());
  return { key: "bare", name: "bare Fastify route", app, prefix: "BENCH-", stores: false, close: () => app.close() };
}

/** The service kit's HTTP app (request ids, metrics, error handler) with a route that does nothing. */
export function kitVariant(): Variant {
  const { app } = createHttpApp({ service: "geo-kit", logger: quiet, lifecycle: createLifecycle(quiet), checks: {} });
  app.post(ROUTE, { schema, logLevel: "warn" }, (_request, reply) => reply.code(200).send());
  return { key: "kit", name: "kit route, no work", app, prefix: "BENCH-", stores: false, close: () => app.close() };
}

/** geo-ingest with its default configuration (GEO_* variables of the environment apply) and info logging. */
export async function geoIngestVariant(infra: BenchInfra): Promise<Variant> {
  const tuning = Object.entries(process.env).filter(([name]) => name.startsWith(CONFIG_PREFIX));
  const config = loadConfig(configSchema, {
    prefix: CONFIG_PREFIX,
    env: {
      ...Object.fromEntries(tuning),
      DATABASE_URL: infra.database.url,
      NATS_URL: infra.natsUrl,
      NATS_NAMESPACE: infra.namespace,
    },
  });
  const logger = createLogger(SERVICE_NAMES.geoIngest, config.LOG_LEVEL);
  const database = createDatabase({ url: config.DATABASE_URL, schema: SCHEMA, applicationName: "geo-ingest" });
  const built = await buildApp({ config, logger, lifecycle: createLifecycle(logger), database, nats: infra.nats });
  await built.start?.();
  return {
    key: "geo",
    name: "geo-ingest",
    app: built.app,
    prefix: "BENCH-",
    stores: true,
    async close() {
      await built.app.close();
      await built.stop?.();
      await database.close();
    },
  };
}

/** The kit route with the fleet in a Map and one INSERT (one commit) per request. */
export function naiveVariant(database: Database<unknown>, vehicles: number): Variant {
  const fleet = new Map(Array.from({ length: vehicles }, (_, i) => [`NAIVE-${i}`, { round: i + 1 }]));
  const { app } = createHttpApp({ service: "geo-naive", logger: quiet, lifecycle: createLifecycle(quiet), checks: {} });
  app.post<{ Params: { vehicle_id: string }; Body: GeolocationInput }>(
    ROUTE,
    { schema, logLevel: "warn" },
    async (request, reply) => {
      const vehicle = fleet.get(request.params.vehicle_id);
      if (!vehicle) return reply.code(404).send({ errors: ["vehicle_id is not a known vehicle External ID"] });
      const { timestamp, latitude, longitude, provider, tracker_id } = request.body;
      const now = new Date().toISOString();
      await database.pool.query(
        `insert into vehicle_positions
           (vehicle_external_id, recorded_at, received_at, round_id, provider, tracker_id, latitude, longitude)
         values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict do nothing`,
        [
          request.params.vehicle_id,
          timestamp || now,
          now,
          vehicle.round,
          provider,
          tracker_id ?? null,
          latitude,
          longitude,
        ],
      );
      return reply.code(200).send();
    },
  );
  return {
    key: "naive",
    name: "naive INSERT per request",
    app,
    prefix: "NAIVE-",
    stores: true,
    close: () => app.close(),
  };
}
