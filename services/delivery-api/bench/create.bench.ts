/**
 * Create-delivery throughput against a bare Fastify route in the same run, and p99 latency at
 * a fixed 200 creates/s. Everything is real: PostgreSQL, the pricing service (its own process,
 * its own database, the account's tariff created through the operator API) over NATS, the
 * outbox relay publishing every event to JetStream. The load comes from a child process, over
 * loopback only. Each run also prints the CPU time each party spent per create, a figure the
 * neighbours' load on a shared machine moves much less than requests/s, and the latency of a
 * bare route doing one durable commit at the same fixed rate: the floor of a create's p99.
 * Target: create >= 0.1x bare req/s, p99 <= 50 ms at 200/s. Last line: `ratio: <create/bare>`.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createTestDatabase } from "@dos/service-kit/testing";
import Fastify from "fastify";
import { outboundBody } from "../test/delivery-fixtures.ts";
import { createTestAccount, OPS_TOKEN, startTestApi } from "../test/fixtures.ts";
import { type CpuSample, cpuPerRequest, createCpuMeter } from "./cpu-meter.ts";
import type { LoadJob, LoadResult } from "./load-generator.ts";

const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const FIXED_RATE = 200;
const generator = fileURLToPath(new URL("./load-generator.ts", import.meta.url));
// The pricing service's own entry points: its migrations, and its benchmark's server process.
const pricingMigrate = fileURLToPath(new URL("../../pricing/src/migrate.ts", import.meta.url));
const pricingServer = fileURLToPath(new URL("../../pricing/bench/responders.ts", import.meta.url));
const run = promisify(execFile);

async function load(job: LoadJob): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, [generator, JSON.stringify(job)], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as LoadResult;
}

function describe(name: string, result: LoadResult, cpu?: [CpuSample, CpuSample]) {
  const { latencyMs: l } = result;
  console.log(
    `${name.padEnd(22)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  ` +
      `p50 ${l.p50} ms  p90 ${l.p90} ms  p99 ${l.p99} ms  max ${l.max} ms  ` +
      `(${result.requests} requests, non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`,
  );
  if (cpu) console.log(`${"".padEnd(22)} ${cpuPerRequest(cpu[0], cpu[1], result.requests)}`);
}

async function measured(job: LoadJob): Promise<[LoadResult, [CpuSample, CpuSample]]> {
  const before = await sampleCpu();
  const result = await load(job);
  return [result, [before, await sampleCpu()]];
}

/**
 * Waits until the relay has published every event of the runs so far, and says how far behind
 * it was: the next run then starts from a quiet system instead of competing with the backlog.
 */
async function outboxDrained() {
  const started = performance.now();
  const backlog = async () =>
    Number(
      (
        await api.db
          .selectFrom("outbox")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("published_at", "is", null)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const initial = await backlog();
  while ((await backlog()) > 0) await setTimeout(50);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`${"".padEnd(22)} outbox: ${initial} events unpublished at the end, all published ${seconds} s later`);
}

/** The real pricing service in its own process, on its own migrated database. */
async function startPricing(namespace: string) {
  const database = await createTestDatabase("delivery_bench_pricing");
  await run(process.execPath, [pricingMigrate], {
    env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: "warn" },
    timeout: 30_000,
  });
  const child = spawn(process.execPath, [pricingServer, "pricing", namespace, database.url], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [chunk] = await once(child.stdout, "data");
  if (!String(chunk).includes("ready")) throw new Error(`pricing did not start: ${chunk}`);
  return {
    pid: child.pid ?? 0,
    async stop() {
      child.kill("SIGTERM");
      await once(child, "exit");
      await database.drop();
    },
  };
}

// BENCH_RATE_LIMIT=off measures the same run without the client API's limit per account.
const rateLimited = process.env.BENCH_RATE_LIMIT !== "off";
const api = await startTestApi({
  LOG_LEVEL: "silent",
  API_PRICING_TIMEOUT_MS: "2000",
  API_RATE_LIMIT_ENABLED: String(rateLimited),
});
const pricing = await startPricing(api.config.NATS_NAMESPACE);
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
const sampleCpu = createCpuMeter(api.pool, pricing.pid, api.config.NATS_URL);
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

try {
  console.log(
    `delivery-api create benchmark: ${DURATION_SECONDS} s per variant, ${CONNECTIONS} connections, loopback, rate limit ${rateLimited ? "on" : "off"}`,
  );
  await load(job(`${bareUrl}/bare`, { durationSeconds: 2 }));
  const bareResult = await load(job(`${bareUrl}/bare`));
  describe("bare fastify route", bareResult);
  await load(job(`${apiUrl}/api/v2/deliveries`, { durationSeconds: 2 }));
  const [createResult, createCpu] = await measured(job(`${apiUrl}/api/v2/deliveries`));
  describe("create delivery", createResult, createCpu);
  await outboxDrained();
  const floor = await load(job(`${bareUrl}/bare-commit`, { connections: 64, ratePerSecond: FIXED_RATE }));
  describe(`1 commit at ${FIXED_RATE}/s`, floor);
  const [fixed, fixedCpu] = await measured(
    job(`${apiUrl}/api/v2/deliveries`, { connections: 64, ratePerSecond: FIXED_RATE }),
  );
  describe(`create at ${FIXED_RATE}/s`, fixed, fixedCpu);
  const failures = createResult.non2xx + createResult.errors + fixed.non2xx + fixed.errors;
  const ratio = createResult.requestsPerSecond / bareResult.requestsPerSecond;
  console.log(
    `target: create >= 0.1x bare (${ratio >= 0.1 ? "met" : "MISSED"}), p99 <= 50 ms at ${FIXED_RATE}/s (${fixed.latencyMs.p99 <= 50 ? "met" : "MISSED"}), failed requests: ${failures}`,
  );
  console.log(`ratio: ${ratio.toFixed(3)}`);
} finally {
  await bare.close();
  await pricing.stop();
  await api.close();
}
