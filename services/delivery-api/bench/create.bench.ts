/**
 * Create-delivery throughput against a bare Fastify route and against the floor (the same rows
 * written in one transaction, nothing else: floor-route.ts) in the same run, then the system at
 * a fixed 200 creates/s. Everything is real and each service is its own process, as in
 * production: delivery-api (this process: routes, group commit, outbox relay, background loops),
 * pricing over NATS (its own database, the account's tariff created through the operator API),
 * webhook-dispatcher consuming every event (its own database; the account has no endpoint, so
 * no POST), a NATS server of the benchmark's own (own-nats.ts) and PostgreSQL. The load comes
 * from a child process, over loopback only.
 *
 * For the burst (closed loop) and the steady rate, each run prints the CPU time each process
 * spent per create, counted from the first request until the system has settled (every event
 * published and taken in by webhook-dispatcher), so the work a create leaves behind is counted
 * with it; beside it the wake-ups of each process and the PostgreSQL transactions and NATS
 * messages per create, exact counts that the neighbours' load does not blur. Between them, the
 * same per second when nothing happens. And the latency of a bare route doing one durable commit
 * at the same fixed rate: the floor of a create's p99.
 *
 * Targets: create >= 0.1x bare req/s; at 200/s, CPU per create <= 2x the burst's and p99 <= 50 ms.
 * Last line: `ratio: <create/bare>`.
 */
import { execFile } from "node:child_process";
import { loadavg } from "node:os";
import { setTimeout } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { deliveryEventPartition, natsNames } from "@dos/contracts";
import { createBackendsMeter, natsServerPid } from "@dos/service-kit/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import Fastify from "fastify";
import { outboundBody } from "../test/delivery-fixtures.ts";
import { createTestAccount, OPS_TOKEN, startTestApi } from "../test/fixtures.ts";
import { cpuPerRequest, createCpuMeter, totalPerUnit } from "./cpu-meter.ts";
import { registerFloorRoute } from "./floor-route.ts";
import type { LoadJob, LoadResult } from "./load-generator.ts";
import { startOwnNats } from "./own-nats.ts";
import { startDispatcher, startPricing } from "./parties.ts";

const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const FIXED_RATE = 200;
const IDLE_SECONDS = 5;
const generator = fileURLToPath(new URL("./load-generator.ts", import.meta.url));
const run = promisify(execFile);

async function load(job: LoadJob): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, [generator, JSON.stringify(job)], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as LoadResult;
}

const column = (text: string) => text.padEnd(24);

function describe(name: string, result: LoadResult) {
  const { latencyMs: l } = result;
  console.log(
    `${column(name)}${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  ` +
      `p50 ${l.p50} ms  p90 ${l.p90} ms  p99 ${l.p99} ms  max ${l.max} ms  ` +
      `(${result.requests} requests, non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`,
  );
}

// BENCH_NATS=shared runs on the machine's NATS (whose CPU then counts every other process's messages).
const ownNats = process.env.BENCH_NATS === "shared" ? null : await startOwnNats();
if (ownNats) process.env.NATS_URL = ownNats.url;
// BENCH_RATE_LIMIT=off measures the same run without the client API's limit per account.
const rateLimited = process.env.BENCH_RATE_LIMIT !== "off";
const api = await startTestApi({
  LOG_LEVEL: "silent",
  API_PRICING_TIMEOUT_MS: "2000",
  API_RATE_LIMIT_ENABLED: String(rateLimited),
  // How long quotes gather (the service's default unless set): 0 measures the system without.
  ...(process.env.API_PRICING_GATHER_MS ? { API_PRICING_GATHER_MS: process.env.API_PRICING_GATHER_MS } : {}),
});
const namespace = api.config.NATS_NAMESPACE;
const pricing = await startPricing(namespace);
const dispatcher = await startDispatcher(namespace);
const account = await createTestAccount(api.db);
const tariff = await api.app.inject({
  method: "POST",
  url: `/ops/v1/accounts/${account.accountId}/tariffs`,
  headers: { authorization: `Bearer ${OPS_TOKEN}` },
  payload: {
    base_cents: { outbound: 900, inbound: 1100, other: 1400 },
    per_package_cents: 100,
    weight_bands: [{ from_kg: 10, cents: 250 }],
    slot_surcharges: [{ shorter_than_minutes: 60, cents: 500 }],
    minimum_cents: 1000,
  },
});
if (tariff.statusCode !== 201) throw new Error(`tariff refused: ${tariff.body}`);
// The limit is paid in full (every create spends from the shared quota) but never reached.
const override = await api.app.inject({
  method: "PATCH",
  url: `/ops/v1/accounts/${account.accountId}`,
  headers: { authorization: `Bearer ${OPS_TOKEN}` },
  payload: { rate_limit: { quota: 1_000_000, window_seconds: 1 } },
});
if (override.statusCode !== 200) throw new Error(`rate limit override refused: ${override.body}`);
await api.start();
const apiDatabase = new URL(api.config.DATABASE_URL).pathname.slice(1);
const natsPid = ownNats?.pid ?? natsServerPid(api.config.NATS_URL);
const databases = [apiDatabase, pricing.database, dispatcher.database];
const sampleCpu = createCpuMeter(api.pool, {
  pricingPid: pricing.pid,
  dispatcherPid: dispatcher.pid,
  natsPid,
  databases,
});
const apiUrl = await api.app.listen({ host: "127.0.0.1", port: 0 });

// The same request shape through Fastify with no work behind it: what the machine allows.
const bare = Fastify({ logger: false });
bare.post("/bare", async (_request, reply) => reply.code(201).send({ ok: true }));
// The same plus one durable commit (synchronous_commit on, as every create): the floor of any
// write's latency on this machine, against which the p99 of creates at a fixed rate is read.
await api.pool.query("create table bench_commits (id bigint generated always as identity primary key)");
bare.post("/bare-commit", async (_request, reply) => {
  await api.pool.query("insert into bench_commits default values");
  return reply.code(201).send({ ok: true });
});
const types = await api.db
  .selectFrom("package_types")
  .select(["id", "name", "volume_dm3", "weight_kg", "fragility", "temperature"])
  .where("account_id", "=", account.accountId)
  .execute();
const floor = await registerFloorRoute(
  bare,
  new Map(
    types.map((t) => [
      Number(t.id),
      {
        type: t.name,
        name: t.name,
        volume_dm3: Number(t.volume_dm3),
        weight_kg: Number(t.weight_kg),
        fragility: t.fragility,
        temperature: t.temperature,
        client_reference: null,
      },
    ]),
  ),
);
const floorBackends = createBackendsMeter((text, values) => api.pool.query<{ pid: number }>(text, values), {
  databases: [floor.database],
});
const floorCpu = async () => {
  const { cpuMs } = await floorBackends();
  const usage = process.cpuUsage();
  return { node: (usage.user + usage.system) / 1000, postgres: cpuMs };
};
const bareUrl = await bare.listen({ host: "127.0.0.1", port: 0 });

const body = JSON.stringify(outboundBody(account));
const headers = { ...account.headers, "content-type": "application/json" };
const job = (url: string, extra: Partial<LoadJob> = {}): LoadJob => ({
  url,
  method: "POST",
  headers,
  body,
  durationSeconds: DURATION_SECONDS,
  connections: CONNECTIONS,
  ...extra,
});

const names = natsNames(namespace);
const jsm = await jetstreamManager(api.nats.nc);
const partitionConsumer = names.consumers.webhookDispatcher(deliveryEventPartition(account.accountId));

/** Whether every event is published (and marked so) and taken in by webhook-dispatcher. */
async function isSettled(): Promise<boolean> {
  const { rows } = await api.pool.query<{ waiting: boolean }>(
    "select exists (select 1 from outbox where published_at is null) as waiting",
  );
  if (rows[0]?.waiting) return false;
  const info = await jsm.consumers.info(names.streams.deliveryEvents, partitionConsumer).catch(() => null);
  return info !== null && info.num_pending === 0 && info.num_ack_pending === 0;
}

/** Waits until the system has settled; returns how long that took, in seconds. */
async function settled(): Promise<number> {
  const started = performance.now();
  while (!(await isSettled())) await setTimeout(100);
  return (performance.now() - started) / 1000;
}

/**
 * What the system did so far, counted exactly: PostgreSQL transactions in the three services'
 * databases (each statement outside a transaction is one) and, on the benchmark's own NATS
 * server, messages in and out.
 */
async function workCounts() {
  const { rows } = await api.pool.query<{ transactions: string }>(
    "select sum(xact_commit + xact_rollback) as transactions from pg_stat_database where datname = any($1)",
    [databases],
  );
  const messages = ownNats ? await ownNats.messages() : null;
  return { transactions: Number(rows[0]?.transactions ?? 0), messages };
}

/** The transactions and NATS messages between two work counts, per unit (a create, a second). */
function describeCounts(
  before: Awaited<ReturnType<typeof workCounts>>,
  after: Awaited<ReturnType<typeof workCounts>>,
  units: number,
  digits: number,
): string {
  const per = (from: number, to: number) => ((to - from) / units).toFixed(digits);
  const nats =
    before.messages && after.messages
      ? `, NATS messages in ${per(before.messages.in, after.messages.in)} out ${per(before.messages.out, after.messages.out)}`
      : "";
  return `PostgreSQL transactions ${per(before.transactions, after.transactions)}${nats}`;
}

/** A run of creates, with the CPU each process spent on them until the system settled. */
async function measuredCreates(name: string, extra: Partial<LoadJob>): Promise<[LoadResult, number]> {
  const before = await sampleCpu();
  const countsBefore = await workCounts();
  const result = await load(job(`${apiUrl}/api/v2/deliveries`, extra));
  const settleSeconds = await settled();
  const after = await sampleCpu();
  describe(name, result);
  console.log(
    `${column("")}CPU ms/create: ${cpuPerRequest(before.cpu, after.cpu, result.requests)} (settled ${settleSeconds.toFixed(1)} s after the load)`,
  );
  console.log(`${column("")}wake-ups/create: ${cpuPerRequest(before.wakeUps, after.wakeUps, result.requests)}`);
  // PostgreSQL's backends report their counts within a second of going idle.
  await setTimeout(1200);
  const countsAfter = await workCounts();
  console.log(`${column("")}per create: ${describeCounts(countsBefore, countsAfter, result.requests, 2)}`);
  return [result, totalPerUnit(before.cpu, after.cpu, result.requests)];
}

try {
  const load1 = loadavg()[0]?.toFixed(1);
  console.log(
    `delivery-api create benchmark: ${DURATION_SECONDS} s per variant, ${CONNECTIONS} connections, loopback, ` +
      `rate limit ${rateLimited ? "on" : "off"}, ${ownNats ? "own NATS server" : "shared NATS server"}, load average ${load1}`,
  );
  await load(job(`${bareUrl}/bare`, { durationSeconds: 2 }));
  const bareResult = await load(job(`${bareUrl}/bare`));
  describe("bare fastify route", bareResult);

  await load(job(`${bareUrl}/floor`, { durationSeconds: 2 }));
  const floorBefore = await floorCpu();
  const floorResult = await load(job(`${bareUrl}/floor`));
  const floorAfter = await floorCpu();
  describe("floor (rows, 1 tx)", floorResult);
  const perFloor = (key: "node" | "postgres") => (floorAfter[key] - floorBefore[key]) / floorResult.requests;
  console.log(
    `${column("")}CPU ms/create: node ${perFloor("node").toFixed(2)} + postgres ${perFloor("postgres").toFixed(2)} = ${(perFloor("node") + perFloor("postgres")).toFixed(2)}`,
  );

  await load(job(`${apiUrl}/api/v2/deliveries`, { durationSeconds: 2 }));
  await settled();
  const [createResult, burstCpu] = await measuredCreates("create delivery", {});

  await setTimeout(1000);
  const idleBefore = await sampleCpu();
  const idleCountsBefore = await workCounts();
  await setTimeout(IDLE_SECONDS * 1000);
  const idleAfter = await sampleCpu();
  const idleCountsAfter = await workCounts();
  console.log(
    `${column("idle")}CPU ms/s: ${cpuPerRequest(idleBefore.cpu, idleAfter.cpu, IDLE_SECONDS)} (nothing sent for ${IDLE_SECONDS} s)`,
  );
  console.log(`${column("")}wake-ups/s: ${cpuPerRequest(idleBefore.wakeUps, idleAfter.wakeUps, IDLE_SECONDS)}`);
  console.log(`${column("")}per second: ${describeCounts(idleCountsBefore, idleCountsAfter, IDLE_SECONDS, 1)}`);

  const commit = await load(job(`${bareUrl}/bare-commit`, { connections: 64, ratePerSecond: FIXED_RATE }));
  describe(`1 commit at ${FIXED_RATE}/s`, commit);
  const [fixed, steadyCpu] = await measuredCreates(`create at ${FIXED_RATE}/s`, {
    connections: 64,
    ratePerSecond: FIXED_RATE,
  });

  const failures = createResult.non2xx + createResult.errors + fixed.non2xx + fixed.errors;
  const ratio = createResult.requestsPerSecond / bareResult.requestsPerSecond;
  const steadyOverBurst = steadyCpu / burstCpu;
  console.log(
    `CPU ms per create: burst ${burstCpu.toFixed(2)}, steady ${FIXED_RATE}/s ${steadyCpu.toFixed(2)}: ` +
      `${steadyOverBurst.toFixed(1)}x (target <= 2x: ${steadyOverBurst <= 2 ? "met" : "MISSED"})`,
  );
  console.log(
    `create / floor: ${(createResult.requestsPerSecond / floorResult.requestsPerSecond).toFixed(2)}; ` +
      `load average at the end ${loadavg()[0]?.toFixed(1)}`,
  );
  console.log(
    `target: create >= 0.1x bare (${ratio >= 0.1 ? "met" : "MISSED"}), p99 <= 50 ms at ${FIXED_RATE}/s (${fixed.latencyMs.p99 <= 50 ? "met" : "MISSED"}), failed requests: ${failures}`,
  );
  console.log(`ratio: ${ratio.toFixed(3)}`);
} finally {
  await bare.close();
  await floor.close();
  await dispatcher.stop();
  await pricing.stop();
  await api.close();
  await ownNats?.stop();
}
