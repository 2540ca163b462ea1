/**
 * The servers the ingest benchmark compares, each listening on its own loopback port: the bare
 * Fastify ceiling, node:http with no framework (the floor of any Node server), the kit's app
 * doing nothing, the durable floor, geo-ingest, and a naive variant. geo-ingest runs as its own
 * process, as `npm start` runs it in production (its V8 flags included), and so does the floor
 * it is measured against; the others are servers of the benchmark's process.
 */
import http from "node:http";
import { createAjv, GeolocationInput, SERVICE_NAMES } from "@dos/contracts";
import { createHttpApp, createLifecycle, createLogger, type Database } from "@dos/service-kit";
import { processCpuMs } from "@dos/service-kit/testing";
import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyInstance } from "fastify";
import { CONFIG_PREFIX } from "../src/config.ts";
import { type BenchInfra, type ServiceProcess, startFloor, startService } from "./bench-kit.ts";

export interface Variant {
  key: string;
  name: string;
  /** Loopback port it listens on. */
  port: number;
  /** Vehicles it knows are named `${prefix}${n}`. */
  prefix: string;
  /** True when the variant stores positions (then every 200 must be a row). */
  stores: boolean;
  /** CPU time (ms) its server process has used so far. */
  cpuMs(): number;
  /** The text of its /metrics. */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

type InProcessFields = Pick<Variant, "key" | "name" | "prefix" | "stores">;

/** A variant served by a Fastify app in this process. */
async function inProcess(fields: InProcessFields, app: FastifyInstance) {
  await app.listen({ host: "127.0.0.1", port: 0 });
  return inProcessVariant(fields, app.server, {
    metrics: async () => (await app.inject({ method: "GET", url: "/metrics" })).body,
    close: () => app.close(),
  });
}

function inProcessVariant(
  fields: InProcessFields,
  server: http.Server,
  served: Pick<Variant, "metrics" | "close">,
): Variant {
  const address = server.address();
  return {
    ...fields,
    ...served,
    port: typeof address === "object" && address ? address.port : 0,
    cpuMs() {
      const cpu = process.cpuUsage();
      return (cpu.user + cpu.system) / 1000;
    },
  };
}

const ROUTE = "/external/vehicles/:vehicle_id/geolocations";
const Params = Type.Object({ vehicle_id: Type.String({ minLength: 1 }) });
const schema = { params: Params, body: GeolocationInput };
const quiet = createLogger(SERVICE_NAMES.geoIngest, "warn");

/** The ceiling: parsing, routing and the same schema validation, nothing else. */
export function bareVariant(): Promise<Variant> {
  const app = Fastify({ logger: false });
  app.post(ROUTE, { schema }, (_request, reply) => reply.code(200).send());
  return inProcess({ key: "bare", name: "bare Fastify route", prefix: "BENCH-", stores: false }, app);
}

const ROUTE_PATH = /^\/external\/vehicles\/[^/]+\/geolocations$/;

/**
 * The floor under any Node.js server: node:http matching the path, parsing the JSON body and
 * checking it against the same schema (the kit's Ajv), with no framework. What a server built
 * on node:http spends before doing any work of its own.
 */
export async function rawVariant(): Promise<Variant> {
  const validate = createAjv().compile(GeolocationInput);
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let status = 404;
      if (request.method === "POST" && ROUTE_PATH.test(request.url ?? "")) {
        try {
          status = validate(JSON.parse(Buffer.concat(chunks).toString("utf8"))) ? 200 : 400;
        } catch {
          status = 400;
        }
      }
      response.writeHead(status, { "content-length": "0" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return inProcessVariant({ key: "raw", name: "node:http, no framework", prefix: "BENCH-", stores: false }, server, {
    metrics: async () => "",
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** The service kit's HTTP app (request ids, metrics, error handler) with a route that does nothing. */
export function kitVariant(): Promise<Variant> {
  const { app } = createHttpApp({ service: "geo-kit", logger: quiet, lifecycle: createLifecycle(quiet), checks: {} });
  app.post(ROUTE, { schema, logLevel: "warn" }, (_request, reply) => reply.code(200).send());
  return inProcess({ key: "kit", name: "kit route, no work", prefix: "BENCH-", stores: false }, app);
}

/** The GEO_* variables of the environment: geo-ingest and the floor run with the same configuration. */
function geoTuning(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith(CONFIG_PREFIX) && entry[1] !== undefined,
    ),
  );
}

/**
 * geo-ingest as `npm start` runs it, with its default configuration (GEO_* variables of the
 * environment apply) and info logging.
 */
export async function geoIngestVariant(infra: BenchInfra): Promise<Variant> {
  const service = await startService(infra, { ...geoTuning(), LOG_LEVEL: "info" });
  return outOfProcess({ key: "geo", name: "geo-ingest", prefix: "BENCH-" }, service);
}

/**
 * The durable floor (floor-server.ts): the same rows, INSERT and group commit as geo-ingest,
 * with nothing else, in its own process with the same V8 flags and GEO_* configuration.
 */
export async function floorVariant(infra: BenchInfra): Promise<Variant> {
  const server = await startFloor(infra, geoTuning());
  return outOfProcess({ key: "floor", name: "floor: same INSERT, no checks", prefix: "FLOOR-" }, server);
}

function outOfProcess(fields: Pick<Variant, "key" | "name" | "prefix">, server: ServiceProcess): Variant {
  return {
    ...fields,
    port: server.port,
    stores: true,
    cpuMs: () => processCpuMs(server.pid),
    metrics: async () => (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text(),
    // SIGTERM: the server stops listening and commits every position it accepted.
    close: () => server.stop(),
  };
}

/** The kit route with the fleet in a Map and one INSERT (one commit) per request. */
export function naiveVariant(database: Database<unknown>, vehicles: number): Promise<Variant> {
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
  return inProcess({ key: "naive", name: "naive INSERT per request", prefix: "NAIVE-", stores: true }, app);
}
