/**
 * geo-ingest against its durable floor and its ceilings, in one run on this machine (≈ 2 min):
 *   bare       — a Fastify route with the same body schema that answers 200 and does nothing;
 *   raw        — node:http with no framework: the same path match, JSON parse and schema check,
 *                the floor under any Node server (what a framework-free hot path could reach);
 *   kit        — the service kit's HTTP app with the same do-nothing route: what every service
 *                pays before doing any work (request ids, metrics, logging, error handling);
 *   floor      — the durable floor (floor-server.ts): the same rows stored with the same INSERT
 *                and the same group commit, with no validation, limiter, fleet lookup or
 *                publishing; its own process with the start script's V8 flags, as geo-ingest;
 *   geo-ingest — the service as `npm start` runs it (its own process, the start script's V8
 *                flags) with its default configuration: the fleet watched from 110,000
 *                vehicles in active rounds, the per-vehicle limit, group commit, publishing;
 *   naive      — the kit route doing one INSERT (one commit) per request, for contrast.
 *
 * Two phases. Throughput: each variant saturated by a closed loop of keep-alive connections,
 * every request for the next vehicle in turn, so the per-vehicle limit (one request per second)
 * checks every request and refuses none: a vehicle's turn comes back after 100,000 requests,
 * several seconds at any rate this machine reaches. Latency: the floor and geo-ingest at a fixed
 * offered rate, open loop (open-loop.ts: each request sent on its schedule whatever the answers,
 * its latency counted from its scheduled time): 10,000 trackers at 1 Hz, unless that is more
 * than 70% of what the floor stored per second in the throughput phase, in which case 70% of
 * the floor's rate (a rate the durable path itself cannot carry with room to spare measures the
 * queue, not the service); the run says which. Load generators run in child processes; on this
 * 2-core machine they still compete with the servers and PostgreSQL for CPU, so the CPU time per
 * request of each is printed too. The machine is shared, so each variant's time is taken in
 * rounds, interleaved with the others': a burst of someone else's work hits all of them. After
 * the run, rows are counted: every position answered 200 must be in the table.
 * Last line: `ratio: <geo-ingest/floor> bare: <geo-ingest/bare> lost: <n>` (throughput ratios;
 * lost: geo-ingest's 200s missing from the table).
 *
 * BENCH_CONNECTIONS (128), BENCH_ROUNDS (4), BENCH_ROUND_MS (2500), BENCH_VEHICLES (100,000;
 * fewer than the requests per second makes geo-ingest refuse some with 429), BENCH_VARIANTS
 * (bare,raw,kit,floor,geo,naive), BENCH_RATE (10,000: the offered rate and number of trackers),
 * BENCH_OPEN_ROUNDS (2), BENCH_OPEN_ROUND_MS (5000) change the run; GEO_* variables change the
 * configuration of geo-ingest and the floor.
 */
import { createDatabase } from "@dos/service-kit";
import { SCHEMA } from "../migrations/index.ts";
import { benchInfra, postgresCpuMeter, runLoad, runOpenLoop, seedFleet } from "./bench-kit.ts";
import {
  bareVariant,
  floorVariant,
  geoIngestVariant,
  kitVariant,
  naiveVariant,
  rawVariant,
  type Variant,
} from "./ingest-variants.ts";
import { type LoadResult, type LoadRound, mergeRounds } from "./load-generator.ts";
import type { OpenLoopRound } from "./open-loop.ts";

// More vehicles than requests per second, so that each keeps to the spec's one per second.
const VEHICLES = Number(process.env.BENCH_VEHICLES ?? 100_000);
const PROVIDER = "bench-trackers";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 128);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 2500);
const FIRST_WARMUP_MS = 1000;
const WARMUP_MS = 300;
const SELECTED = new Set((process.env.BENCH_VARIANTS ?? "bare,raw,kit,floor,geo,naive").split(","));
/** The offered rate of the latency phase: trackers posting once a second each. */
const RATE = Number(process.env.BENCH_RATE ?? 10_000);
/** Share of the floor's throughput the offered rate may take on a machine too slow for RATE. */
const FLOOR_SHARE = 0.7;
const OPEN_ROUNDS = Number(process.env.BENCH_OPEN_ROUNDS ?? 2);
const OPEN_ROUND_MS = Number(process.env.BENCH_OPEN_ROUND_MS ?? 5000);
const OPEN_WARMUP_MS = 1000;
const OPEN_DRAIN_MS = 10_000;
const OPEN_MAX_CONNECTIONS = 2000;
/** Tracker i of the latency phase posts as vehicle `${prefix}T${i}`, apart from the throughput phase's vehicles. */
const TRACKER_INFIX = "T";
const TARGET = { ratio: 0.85, p99Ms: 25 };

interface Phase<R extends LoadRound> {
  rounds: R[];
  serverCpuMs: number;
  postgresCpuMs: number;
}

interface Run {
  variant: Variant;
  closed: Phase<LoadRound>;
  open: Phase<OpenLoopRound>;
  stopped?: boolean;
  rows?: number;
}

const infra = await benchInfra("geo_bench");
const database = createDatabase({ url: infra.database.url, schema: SCHEMA, applicationName: "geo-ingest-bench" });
const postgresCpuMs = postgresCpuMeter(database.pool);
const runs: Run[] = [];
let batches = "";
let offered = { rate: RATE, why: "" };
try {
  process.stderr.write(`seeding ${VEHICLES} + ${RATE} vehicles in active rounds...\n`);
  await seedFleet(infra.kv, "BENCH-", VEHICLES, PROVIDER);
  await seedFleet(infra.kv, `BENCH-${TRACKER_INFIX}`, RATE, PROVIDER);
  const variants = [
    SELECTED.has("bare") && (await bareVariant()),
    SELECTED.has("raw") && (await rawVariant()),
    SELECTED.has("kit") && (await kitVariant()),
    SELECTED.has("floor") && (await floorVariant(infra)),
    SELECTED.has("geo") && (await geoIngestVariant(infra)),
    SELECTED.has("naive") && (await naiveVariant(database, VEHICLES)),
  ].filter((v): v is Variant => v !== false);
  const phase = () => ({ rounds: [], serverCpuMs: 0, postgresCpuMs: 0 });
  for (const variant of variants) runs.push({ variant, closed: phase(), open: phase() });
  for (let round = 0; round < ROUNDS; round++) {
    for (const run of runs) await closedRound(run, round);
  }
  offered = offeredRate();
  const latencyRuns = runs.filter((run) => run.variant.key === "floor" || run.variant.key === "geo");
  for (let round = 0; round < OPEN_ROUNDS; round++) {
    for (const run of latencyRuns) await openRound(run, offered.rate);
  }
  for (const run of runs) {
    if (run.variant.key === "geo") batches = await batchFigures(run.variant);
    run.stopped = true;
    await run.variant.close();
    if (run.variant.stores) run.rows = await countRows(run.variant.prefix);
  }
} finally {
  // After a failure too: a server process left running would outlive the benchmark.
  await Promise.allSettled(runs.filter((run) => !run.stopped).map((run) => run.variant.close()));
  await database.close();
  await infra.close();
}
report();

/** Runs `load` against a variant, adding the CPU time its server and PostgreSQL spent to `phase`. */
async function measured<R extends LoadRound>(run: Run, phase: Phase<R>, load: () => Promise<R>) {
  const serverStart = run.variant.cpuMs();
  const postgresStart = await postgresCpuMs();
  const result = await load();
  phase.serverCpuMs += run.variant.cpuMs() - serverStart;
  phase.postgresCpuMs += (await postgresCpuMs()) - postgresStart;
  phase.rounds.push(result);
}

function closedRound(run: Run, round: number) {
  return measured(run, run.closed, () =>
    runLoad({
      port: run.variant.port,
      connections: CONNECTIONS,
      warmupMs: round === 0 ? FIRST_WARMUP_MS : WARMUP_MS,
      durationMs: ROUND_MS,
      vehicles: VEHICLES,
      vehiclePrefix: run.variant.prefix,
      provider: PROVIDER,
      sequenceStart: run.closed.rounds.at(-1)?.sent ?? 0,
    }),
  );
}

function openRound(run: Run, rate: number) {
  return measured(run, run.open, () =>
    runOpenLoop({
      port: run.variant.port,
      trackers: rate,
      warmupMs: OPEN_WARMUP_MS,
      durationMs: OPEN_ROUND_MS,
      vehiclePrefix: `${run.variant.prefix}${TRACKER_INFIX}`,
      provider: PROVIDER,
      maxConnections: OPEN_MAX_CONNECTIONS,
      drainMs: OPEN_DRAIN_MS,
    }),
  );
}

/** RATE, unless it is more than FLOOR_SHARE of the floor's throughput in this run. */
function offeredRate(): { rate: number; why: string } {
  const floor = runs.find((run) => run.variant.key === "floor");
  if (!floor) return { rate: RATE, why: `${RATE} trackers at 1 Hz (no floor in this run to check it against)` };
  const capacity = mergeRounds(floor.closed.rounds).okPerSecond;
  if (RATE <= capacity * FLOOR_SHARE) {
    return { rate: RATE, why: `${RATE} trackers at 1 Hz (the floor stored ${capacity.toFixed(0)}/s in this run)` };
  }
  const rate = Math.floor(capacity * FLOOR_SHARE);
  return {
    rate,
    why:
      `this machine cannot offer ${RATE}/s: the floor stored only ${capacity.toFixed(0)}/s in this run, ` +
      `so ${FLOOR_SHARE * 100}% of it, ${rate} trackers at 1 Hz`,
  };
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

/** 200s answered in both phases (warm-ups included) less the rows stored: positions lost. */
function lostOf(run: Run | undefined): number {
  if (run?.rows === undefined) return Number.NaN;
  const answered = [...run.closed.rounds, ...run.open.rounds].reduce((sum, round) => sum + round.okTotal, 0);
  return Math.max(0, answered - run.rows);
}

function report() {
  const pad = (text: string, width: number) => text.padEnd(width);
  const perAnswer = (ms: number, result: LoadResult) => ((ms * 1000) / Math.max(1, result.answeredTotal)).toFixed(0);
  const cpuOf = (phase: Phase<LoadRound>, result: LoadResult) =>
    `${perAnswer(phase.serverCpuMs, result)}+${perAnswer(phase.postgresCpuMs, result)}+${perAnswer(result.cpuMs, result)}`;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `\ngeo-ingest ingest benchmark, throughput: ${VEHICLES} vehicles, ${CONNECTIONS} keep-alive connections (closed loop), ` +
      `${ROUNDS} interleaved rounds of ${ROUND_MS / 1000} s per variant; load generator in a child process (2 cores shared)`,
  );
  out(
    `${pad("variant", 31)}${pad("2xx req/s", 11)}${pad("p50 ms", 8)}${pad("p99 ms", 8)}${pad("CPU µs/req server+pg+gen", 26)}statuses, rows`,
  );
  const closed = new Map<string, LoadResult>();
  for (const run of runs) {
    const result = mergeRounds(run.closed.rounds);
    closed.set(run.variant.key, result);
    const stored = run.rows === undefined ? "" : `; 200s ${okOf(run)}, rows ${run.rows}, lost ${lostOf(run)}`;
    out(
      `${pad(run.variant.name, 31)}${pad(result.okPerSecond.toFixed(0), 11)}${pad(result.p50Ms.toFixed(1), 8)}` +
        `${pad(result.p99Ms.toFixed(1), 8)}${pad(cpuOf(run.closed, result), 26)}${JSON.stringify(result.statuses)}${stored}`,
    );
  }
  const latencyRuns = runs.filter((run) => run.open.rounds.length > 0);
  const open = new Map<string, LoadResult>();
  if (latencyRuns.length > 0) {
    out(
      `\nlatency at a fixed offered rate (open loop, from each request's scheduled time): ${offered.rate}/s offered, ` +
        `${OPEN_ROUNDS} interleaved rounds of ${OPEN_ROUND_MS / 1000} s per variant`,
    );
    out(`offered: ${offered.why}`);
    out(
      `${pad("variant", 31)}${pad("2xx req/s", 11)}${pad("p50 ms", 8)}${pad("p99 ms", 8)}${pad("max ms", 8)}` +
        `${pad("CPU µs/req server+pg+gen", 26)}${pad("send lag p99/max ms", 21)}${pad("conns", 7)}statuses`,
    );
    for (const run of latencyRuns) {
      const result = mergeRounds(run.open.rounds);
      open.set(run.variant.key, result);
      const rounds = run.open.rounds;
      const lagP99 = Math.max(...rounds.map((round) => round.sendLagP99Ms));
      const lagMax = Math.max(...rounds.map((round) => round.sendLagMaxMs));
      const unanswered = rounds.reduce((sum, round) => sum + round.unanswered, 0);
      const resent = rounds.reduce((sum, round) => sum + round.resent, 0);
      out(
        `${pad(run.variant.name, 31)}${pad(result.okPerSecond.toFixed(0), 11)}${pad(result.p50Ms.toFixed(1), 8)}` +
          `${pad(result.p99Ms.toFixed(1), 8)}${pad(maxOf(rounds).toFixed(1), 8)}${pad(cpuOf(run.open, result), 26)}` +
          `${pad(`${lagP99.toFixed(1)}/${lagMax.toFixed(1)}`, 21)}${pad(String(Math.max(...rounds.map((r) => r.connections))), 7)}` +
          `${JSON.stringify(result.statuses)}${unanswered > 0 ? `, unanswered ${unanswered}` : ""}` +
          `${resent > 0 ? `, resent after a keep-alive close ${resent}` : ""}`,
      );
    }
  }
  const bare = closed.get("bare");
  const floor = closed.get("floor");
  const geo = closed.get("geo");
  const ratio = floor && geo ? geo.okPerSecond / floor.okPerSecond : Number.NaN;
  const bareRatio = bare && geo ? geo.okPerSecond / bare.okPerSecond : Number.NaN;
  const lost = lostOf(runs.find((run) => run.variant.key === "geo"));
  if (batches) out(batches);
  out(
    `target: ratio >= ${TARGET.ratio} (${ratio.toFixed(2)}), geo-ingest p99 <= ${TARGET.p99Ms} ms at ${offered.rate}/s offered ` +
      `(${open.get("geo")?.p99Ms.toFixed(1)} ms), lost 0 (${lost})`,
  );
  out(`ratio: ${ratio.toFixed(2)} bare: ${bareRatio.toFixed(2)} lost: ${lost}`);
}

function okOf(run: Run): number {
  return [...run.closed.rounds, ...run.open.rounds].reduce((sum, round) => sum + round.okTotal, 0);
}

/** The longest latency recorded over the rounds (the histogram's highest bucket). */
function maxOf(rounds: LoadRound[]): number {
  return Math.max(...rounds.map((round) => ((round.latencies.at(-1)?.[0] ?? 0) + 1) * 0.05));
}
