/**
 * geo-ingest against its ceiling, in one run on this machine (≈ 50 s):
 *   1. bare       — a Fastify route with the same body schema that answers 200 and does nothing;
 *   2. kit        — the service kit's HTTP app (request ids, metrics, error handler) with the same
 *                   do-nothing route: what every service pays before doing any work;
 *   3. geo-ingest — the service with its default configuration: the fleet watched from 10,000
 *                   vehicles in active rounds, the per-tracker limit, group commit, publishing;
 *   4. naive      — the kit route doing one INSERT (one commit) per request, for contrast.
 * Every request is for the next vehicle in turn, from its own tracker id, so the per-tracker
 * limit checks every request and refuses none. The load generator runs in a child process; on
 * this 2-core machine it still competes with the server and PostgreSQL for CPU, so the CPU time
 * per request of each is printed too. After each storing variant, rows are counted: every
 * position answered 200 must be in the table. Last line: `ratio: <geo-ingest/bare> lost: <n>`.
 *
 * BENCH_CONNECTIONS (128), BENCH_DURATION_MS (10000) and BENCH_VARIANTS (bare,kit,geo,naive)
 * change the run; GEO_* variables change geo-ingest's configuration.
 */
import { GeolocationInput, SERVICE_NAMES } from "@dos/contracts";
import { createDatabase, createHttpApp, createLifecycle, createLogger, loadConfig } from "@dos/service-kit";
import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyInstance } from "fastify";
import { SCHEMA } from "../migrations/index.ts";
import { buildApp } from "../src/app.ts";
import { CONFIG_PREFIX, configSchema } from "../src/config.ts";
import { benchInfra, postgresCpuMs, runLoad, seedFleet } from "./bench-kit.ts";
import type { LoadResult } from "./load-generator.ts";

const VEHICLES = 10_000;
const PROVIDER = "bench-trackers";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 128);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const WARMUP_MS = 1500;
const VARIANTS = new Set((process.env.BENCH_VARIANTS ?? "bare,kit,geo,naive").split(","));
const NAMES = {
  bare: "bare Fastify route",
  kit: "kit route, no work",
  geo: "geo-ingest",
  naive: "naive INSERT per request",
};
const Params = Type.Object({ vehicle_id: Type.String({ minLength: 1 }) });

const infra = await benchInfra("geo_bench");
const logger = createLogger(SERVICE_NAMES.geoIngest, "warn");
const database = createDatabase({ url: infra.database.url, schema: SCHEMA, applicationName: "geo-ingest-bench" });

interface Measured extends LoadResult {
  /** CPU per answer, over the whole run: this process (the server), PostgreSQL, the load generator. */
  serverCpuUs: number;
  postgresCpuUs: number;
  generatorCpuUs: number;
}

const load = async (app: FastifyInstance, vehiclePrefix: string): Promise<Measured> => {
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const serverStart = process.cpuUsage();
  const postgresStart = await postgresCpuMs(database.pool);
  const result = await runLoad({
    port,
    connections: CONNECTIONS,
    warmupMs: WARMUP_MS,
    durationMs: DURATION_MS,
    vehicles: VEHICLES,
    vehiclePrefix,
    provider: PROVIDER,
  });
  const server = process.cpuUsage(serverStart);
  const postgresMs = (await postgresCpuMs(database.pool)) - postgresStart;
  const perAnswer = (ms: number) => (ms * 1000) / Math.max(1, result.answeredTotal);
  return {
    ...result,
    serverCpuUs: perAnswer((server.user + server.system) / 1000),
    postgresCpuUs: perAnswer(postgresMs),
    generatorCpuUs: perAnswer(result.cpuMs),
  };
};

const countRows = async (prefix: string) => {
  const { rows } = await database.pool.query<{ n: number }>(
    "select count(*)::int as n from vehicle_positions where vehicle_external_id like $1",
    [`${prefix}%`],
  );
  return rows[0]?.n ?? 0;
};

const results: Array<{ name: string; result: Measured; rows?: number }> = [];
try {
  process.stderr.write(`seeding ${VEHICLES} vehicles in active rounds...\n`);
  await seedFleet(infra.kv, "BENCH-", VEHICLES, PROVIDER);
  if (VARIANTS.has("bare")) await runBare();
  if (VARIANTS.has("kit")) await runKit();
  if (VARIANTS.has("geo")) await runGeoIngest();
  if (VARIANTS.has("naive")) await runNaive();
} finally {
  await database.close();
  await infra.close();
}

/** The ceiling: parsing, routing and the same schema validation, nothing else. */
async function runBare() {
  const bare = Fastify({ logger: false });
  bare.post(
    "/external/vehicles/:vehicle_id/geolocations",
    { schema: { params: Params, body: GeolocationInput } },
    (_r, reply) => reply.code(200).send(),
  );
  results.push({ name: NAMES.bare, result: await load(bare, "BENCH-") });
  await bare.close();
}

/** The service kit's HTTP app (request ids, metrics, error handler) with a route that does nothing. */
async function runKit() {
  const { app } = createHttpApp({ service: "geo-ingest-kit", logger, lifecycle: createLifecycle(logger), checks: {} });
  app.post(
    "/external/vehicles/:vehicle_id/geolocations",
    { schema: { params: Params, body: GeolocationInput }, logLevel: "warn" },
    (_r, reply) => reply.code(200).send(),
  );
  results.push({ name: NAMES.kit, result: await load(app, "BENCH-") });
  await app.close();
}

/** geo-ingest as production runs it: default configuration, info logging. */
async function runGeoIngest() {
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
  const geoLogger = createLogger(SERVICE_NAMES.geoIngest, config.LOG_LEVEL);
  const geoDatabase = createDatabase({ url: config.DATABASE_URL, schema: SCHEMA, applicationName: "geo-ingest" });
  const geo = await buildApp({
    config,
    logger: geoLogger,
    lifecycle: createLifecycle(geoLogger),
    database: geoDatabase,
    nats: infra.nats,
  });
  await geo.start?.();
  const geoResult = await load(geo.app, "BENCH-");
  await geo.app.close();
  await geo.stop?.();
  await geoDatabase.close();
  results.push({ name: NAMES.geo, result: geoResult, rows: await countRows("BENCH-") });
}

/** The kit route with the fleet in a Map and one INSERT (one commit) per request. */
async function runNaive() {
  const fleet = new Map(Array.from({ length: VEHICLES }, (_, i) => [`NAIVE-${i}`, { round: i + 1 }]));
  const { app: naive } = createHttpApp({
    service: "geo-ingest-naive",
    logger,
    lifecycle: createLifecycle(logger),
    checks: {},
  });
  naive.post<{ Params: { vehicle_id: string }; Body: GeolocationInput }>(
    "/external/vehicles/:vehicle_id/geolocations",
    { schema: { params: Params, body: GeolocationInput }, logLevel: "warn" },
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
  results.push({
    name: NAMES.naive,
    result: await load(naive, "NAIVE-"),
    rows: await countRows("NAIVE-"),
  });
  await naive.close();
}

const pad = (text: string, width: number) => text.padEnd(width);
const cpu = (r: Measured) => `${r.serverCpuUs.toFixed(0)}+${r.postgresCpuUs.toFixed(0)}+${r.generatorCpuUs.toFixed(0)}`;
process.stdout.write(
  `\ngeo-ingest ingest benchmark: ${VEHICLES} vehicles, ${CONNECTIONS} keep-alive connections, ` +
    `${DURATION_MS / 1000} s per variant after ${WARMUP_MS / 1000} s warm-up; load generator in a child process (2 cores shared)\n`,
);
process.stdout.write(
  `${pad("variant", 28)}${pad("2xx req/s", 12)}${pad("p50 ms", 9)}${pad("p99 ms", 9)}${pad("CPU µs/req server+pg+gen", 27)}statuses / rows\n`,
);
for (const { name, result, rows } of results) {
  const stored = rows === undefined ? "" : `; 200s ${result.okTotal}, rows ${rows}, lost ${result.okTotal - rows}`;
  process.stdout.write(
    `${pad(name, 28)}${pad(result.okPerSecond.toFixed(0), 12)}${pad(result.p50Ms.toFixed(2), 9)}${pad(result.p99Ms.toFixed(2), 9)}${pad(cpu(result), 27)}${JSON.stringify(result.statuses)}${stored}\n`,
  );
}
const bareRun = results.find((r) => r.name === NAMES.bare);
const geoRun = results.find((r) => r.name === NAMES.geo);
const ratio = bareRun && geoRun ? geoRun.result.okPerSecond / bareRun.result.okPerSecond : 0;
const lost = geoRun?.rows === undefined ? Number.NaN : Math.max(0, geoRun.result.okTotal - geoRun.rows);
process.stdout.write(
  `target: ratio >= 0.6, geo-ingest p99 <= 25 ms, lost 0 (geo-ingest p99 ${geoRun?.result.p99Ms.toFixed(2)} ms)\n`,
);
process.stdout.write(`ratio: ${ratio.toFixed(2)} lost: ${lost}\n`);
