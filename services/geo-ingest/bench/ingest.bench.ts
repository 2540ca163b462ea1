/**
 * geo-ingest against its ceiling, in one run on this machine (≈ 70 s):
 *   bare       — a Fastify route with the same body schema that answers 200 and does nothing;
 *   raw        — node:http with no framework: the same path match, JSON parse and schema check,
 *                the floor under any Node server (what a framework-free hot path could reach);
 *   kit        — the service kit's HTTP app with the same do-nothing route: what every service
 *                pays before doing any work (request ids, metrics, logging, error handling);
 *   geo-ingest — the service as `npm start` runs it (its own process, the start script's V8
 *                flags) with its default configuration: the fleet watched from 100,000
 *                vehicles in active rounds, the per-vehicle limit, group commit, publishing;
 *   naive      — the kit route doing one INSERT (one commit) per request, for contrast.
 * Every request is for the next vehicle in turn, so the per-vehicle limit (one request per
 * second) checks every request and refuses none: a vehicle's turn comes back after 100,000
 * requests, several seconds at any rate this machine reaches. The load generator runs in a child process; on
 * this 2-core machine it still competes with the server and PostgreSQL for CPU, so the CPU time
 * per request of each is printed too. The machine is shared, so each variant's 10 s are taken
 * in rounds, interleaved with the others': a burst of someone else's work hits all of them.
 * After the run, rows are counted: every position answered 200 must be in the table.
 * Last line: `ratio: <geo-ingest/bare> lost: <n>`.
 *
 * BENCH_CONNECTIONS (128), BENCH_ROUNDS (4), BENCH_ROUND_MS (2500), BENCH_VEHICLES (100,000;
 * fewer than the requests per second makes geo-ingest refuse some with 429) and BENCH_VARIANTS
 * (bare,raw,kit,geo,naive) change the run; GEO_* variables change geo-ingest's configuration.
 */
import { createDatabase } from "@dos/service-kit";
import { SCHEMA } from "../migrations/index.ts";
import { benchInfra, postgresCpuMs, runLoad, seedFleet } from "./bench-kit.ts";
import {
  bareVariant,
  geoIngestVariant,
  kitVariant,
  naiveVariant,
  rawVariant,
  type Variant,
} from "./ingest-variants.ts";
import { type LoadResult, type LoadRound, mergeRounds } from "./load-generator.ts";

// More vehicles than requests per second, so that each keeps to the spec's one per second.
const VEHICLES = Number(process.env.BENCH_VEHICLES ?? 100_000);
const PROVIDER = "bench-trackers";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 128);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 2500);
const FIRST_WARMUP_MS = 1000;
const WARMUP_MS = 300;
const SELECTED = new Set((process.env.BENCH_VARIANTS ?? "bare,raw,kit,geo,naive").split(","));

interface Run {
  variant: Variant;
  rounds: LoadRound[];
  serverCpuMs: number;
  postgresCpuMs: number;
  rows?: number;
}

const infra = await benchInfra("geo_bench");
const database = createDatabase({ url: infra.database.url, schema: SCHEMA, applicationName: "geo-ingest-bench" });
const runs: Run[] = [];
let batches = "";
try {
  process.stderr.write(`seeding ${VEHICLES} vehicles in active rounds...\n`);
  await seedFleet(infra.kv, "BENCH-", VEHICLES, PROVIDER);
  const variants = [
    SELECTED.has("bare") && (await bareVariant()),
    SELECTED.has("raw") && (await rawVariant()),
    SELECTED.has("kit") && (await kitVariant()),
    SELECTED.has("geo") && (await geoIngestVariant(infra)),
    SELECTED.has("naive") && (await naiveVariant(database, VEHICLES)),
  ].filter((v): v is Variant => v !== false);
  for (const variant of variants) runs.push({ variant, rounds: [], serverCpuMs: 0, postgresCpuMs: 0 });
  for (let round = 0; round < ROUNDS; round++) {
    for (const run of runs) await measureRound(run, round);
  }
  for (const run of runs) {
    if (run.variant.key === "geo") batches = await batchFigures(run.variant);
    await run.variant.close();
    if (run.variant.stores) run.rows = await countRows(run.variant.prefix);
  }
} finally {
  await database.close();
  await infra.close();
}
report();

async function measureRound(run: Run, round: number) {
  const serverStart = run.variant.cpuMs();
  const postgresStart = await postgresCpuMs(database.pool);
  const result = await runLoad({
    port: run.variant.port,
    connections: CONNECTIONS,
    warmupMs: round === 0 ? FIRST_WARMUP_MS : WARMUP_MS,
    durationMs: ROUND_MS,
    vehicles: VEHICLES,
    vehiclePrefix: run.variant.prefix,
    provider: PROVIDER,
    sequenceStart: run.rounds.at(-1)?.sent ?? 0,
  });
  run.serverCpuMs += run.variant.cpuMs() - serverStart;
  run.postgresCpuMs += (await postgresCpuMs(database.pool)) - postgresStart;
  run.rounds.push(result);
}

/** Group-commit figures from geo-ingest's own metrics. */
async function batchFigures(variant: Variant): Promise<string> {
  const text = await variant.metrics();
  const value = (name: string) =>
    Number(new RegExp(`^${name}\\{[^}]*\\} ([0-9.e+-]+)$`, "m").exec(text)?.[1] ?? Number.NaN);
  const count = value("geo_write_batch_rows_count");
  return (
    `geo-ingest group commit: ${count} batches, ${(value("geo_write_batch_rows_sum") / count).toFixed(1)} rows each on average, ` +
    `${((value("geo_write_duration_seconds_sum") / count) * 1000).toFixed(2)} ms per INSERT on average`
  );
}

async function countRows(prefix: string): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>(
    "select count(*)::int as n from vehicle_positions where vehicle_external_id like $1",
    [`${prefix}%`],
  );
  return rows[0]?.n ?? 0;
}

function report() {
  const pad = (text: string, width: number) => text.padEnd(width);
  const perAnswer = (ms: number, result: LoadResult) => ((ms * 1000) / Math.max(1, result.answeredTotal)).toFixed(0);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `\ngeo-ingest ingest benchmark: ${VEHICLES} vehicles, ${CONNECTIONS} keep-alive connections, ` +
      `${ROUNDS} interleaved rounds of ${ROUND_MS / 1000} s per variant; load generator in a child process (2 cores shared)`,
  );
  out(
    `${pad("variant", 27)}${pad("2xx req/s", 11)}${pad("p50 ms", 8)}${pad("p99 ms", 8)}${pad("CPU µs/req server+pg+gen", 26)}statuses, rows`,
  );
  const merged = new Map<string, LoadResult>();
  for (const run of runs) {
    const result = mergeRounds(run.rounds);
    merged.set(run.variant.key, result);
    const cpu = `${perAnswer(run.serverCpuMs, result)}+${perAnswer(run.postgresCpuMs, result)}+${perAnswer(result.cpuMs, result)}`;
    const stored = run.rows === undefined ? "" : `; 200s ${result.okTotal}, rows ${run.rows}`;
    out(
      `${pad(run.variant.name, 27)}${pad(result.okPerSecond.toFixed(0), 11)}${pad(result.p50Ms.toFixed(1), 8)}` +
        `${pad(result.p99Ms.toFixed(1), 8)}${pad(cpu, 26)}${JSON.stringify(result.statuses)}${stored}`,
    );
  }
  const bare = merged.get("bare");
  const geo = merged.get("geo");
  const geoRun = runs.find((run) => run.variant.key === "geo");
  const ratio = bare && geo ? geo.okPerSecond / bare.okPerSecond : Number.NaN;
  const lost = geo && geoRun?.rows !== undefined ? Math.max(0, geo.okTotal - geoRun.rows) : Number.NaN;
  if (batches) out(batches);
  out(`target: ratio >= 0.6, geo-ingest p99 <= 25 ms (${geo?.p99Ms.toFixed(1)} ms), lost 0`);
  out(`ratio: ${ratio.toFixed(2)} lost: ${lost}`);
}
