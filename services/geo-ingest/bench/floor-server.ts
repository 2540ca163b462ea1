/**
 * The ingest benchmark's durable floor: the leanest server that stores what geo-ingest stores,
 * the way geo-ingest stores it. Same rows, same statement (insertPositions: the binary unnest
 * INSERT ... ON CONFLICT DO NOTHING, autocommit), same group commit (the kit's batcher with
 * geo-ingest's batch size, write concurrency, linger, row order and failure policy, read from
 * the same GEO_* configuration), and a 200 only once the batch holding the row has committed.
 * Nothing else: node:http with no framework, JSON.parse with no schema, no fleet lookup (the
 * round id is the vehicle's number plus one, as the benchmark seeds the fleet), no limiter, no
 * provider check, no publishing, no metrics, no logging. geo-ingest against this is geo-ingest's
 * own cost, with the cost of storing positions durably (PostgreSQL's, and the client's) on
 * both sides.
 *
 * Run by the benchmark as its own process with the start script's V8 flags, as geo-ingest is.
 * Environment: PORT, DATABASE_URL, DATABASE_POOL_SIZE and the GEO_* variables.
 */
import http from "node:http";
import { createBatcher, createDatabase, loadConfig, refusesData } from "@dos/service-kit";
import { SCHEMA } from "../migrations/index.ts";
import { CONFIG_PREFIX, configSchema } from "../src/config.ts";
import { byVehicleAndTime, PositionRefused } from "../src/positions/position-writer.ts";
import { insertPositions } from "../src/positions/positions.repository.ts";
import type { PositionRow } from "../src/positions/positions.table.ts";

const config = loadConfig(configSchema, { prefix: CONFIG_PREFIX });
const database = createDatabase({
  url: config.DATABASE_URL,
  schema: SCHEMA,
  poolSize: config.DATABASE_POOL_SIZE,
  applicationName: "geo-ingest-floor",
});
const batcher = createBatcher<PositionRow, undefined>({
  async handle(rows) {
    try {
      await insertPositions(database.pool, rows);
    } catch (error) {
      throw refusesData(error) ? new PositionRefused(error) : error;
    }
    return new Array<undefined>(rows.length);
  },
  maxBatch: config.GEO_BATCH_MAX_ROWS,
  concurrency: config.GEO_WRITE_CONCURRENCY,
  lingerMs: config.GEO_BATCH_MAX_DELAY_MS,
  order: config.GEO_WRITE_CONCURRENCY > 1 ? byVehicleAndTime : undefined,
  onFailure: { policy: "isolate", when: (error) => error instanceof PositionRefused },
});

const PREFIX = "/external/vehicles/";
const SUFFIX = "/geolocations";
const NO_BODY = { "content-length": "0" };

/** The benchmark seeds vehicle `<prefix><n>` in round n + 1: the trailing digits, plus one. */
function roundOf(vehicle: string): number {
  let start = vehicle.length;
  while (start > 0 && vehicle.charCodeAt(start - 1) >= 48 && vehicle.charCodeAt(start - 1) <= 57) start--;
  return Number(vehicle.slice(start)) + 1;
}

interface Body {
  timestamp?: string | null;
  latitude: number;
  longitude: number;
  provider: string;
  tracker_id?: number | null;
}

const server = http.createServer((request, response) => {
  const answer = (status: number) => response.writeHead(status, NO_BODY).end();
  const url = request.url ?? "";
  if (request.method === "GET" && url === "/readyz") return answer(200);
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    if (request.method !== "POST" || !url.startsWith(PREFIX) || !url.endsWith(SUFFIX)) return answer(404);
    let body: Body;
    try {
      body = JSON.parse((chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString("utf8"));
    } catch {
      return answer(400);
    }
    const vehicle = url.slice(PREFIX.length, -SUFFIX.length);
    const now = Date.now();
    const stamped = typeof body.timestamp === "string" && body.timestamp !== "";
    batcher
      .add({
        vehicleExternalId: vehicle,
        recordedMs: stamped ? Date.parse(body.timestamp as string) : now,
        receivedMs: now,
        serverStamped: !stamped,
        roundId: roundOf(vehicle),
        provider: body.provider,
        trackerId: body.tracker_id ?? null,
        latitude: body.latitude,
        longitude: body.longitude,
      })
      .then(
        () => answer(200),
        () => answer(503),
      );
  });
});

// SIGTERM: stop taking requests, commit every position accepted, then exit (as geo-ingest does).
process.once("SIGTERM", () => {
  server.closeIdleConnections();
  server.close();
  void batcher
    .drain()
    .then(() => database.close())
    .then(() => process.exit(0));
});

server.listen(config.PORT, config.HOST);
