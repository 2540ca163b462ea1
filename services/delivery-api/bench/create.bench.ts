/**
 * Create-delivery throughput against a bare Fastify route in the same run, and p99 latency at
 * a fixed 200 creates/s. Everything real but the pricing service, which a NATS responder of
 * the test suite stands in for (a deterministic price on the real bus): PostgreSQL, NATS, the
 * outbox relay publishing every event to JetStream. The load comes from a child process, over
 * loopback only. Target: create >= 0.1x bare req/s, p99 <= 50 ms at 200/s.
 * Last line: `ratio: <create/bare>`.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Fastify from "fastify";
import { outboundBody } from "../test/delivery-fixtures.ts";
import { createTestAccount, startTestApi } from "../test/fixtures.ts";
import { startPricingResponder } from "../test/pricing-responder.ts";
import type { LoadJob, LoadResult } from "./load-generator.ts";

const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const FIXED_RATE = 200;
const generator = fileURLToPath(new URL("./load-generator.ts", import.meta.url));
const run = promisify(execFile);

async function load(job: LoadJob): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, [generator, JSON.stringify(job)], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as LoadResult;
}

function describe(name: string, result: LoadResult) {
  const { latencyMs: l } = result;
  console.log(
    `${name.padEnd(22)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  ` +
      `p50 ${l.p50} ms  p90 ${l.p90} ms  p99 ${l.p99} ms  max ${l.max} ms  ` +
      `(${result.requests} requests, non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`,
  );
}

const api = await startTestApi({ LOG_LEVEL: "silent", API_PRICING_TIMEOUT_MS: "2000", DATABASE_POOL_SIZE: "20" });
const pricing = await startPricingResponder(api.config.NATS_NAMESPACE);
const account = await createTestAccount(api.db);
await api.start();
const apiUrl = await api.app.listen({ host: "127.0.0.1", port: 0 });

// The same request shape through Fastify with no work behind it: what the machine allows.
const bare = Fastify({ logger: false });
bare.post("/bare", async (_request, reply) => reply.code(201).send({ ok: true }));
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
  console.log(`delivery-api create benchmark: ${DURATION_SECONDS} s per variant, ${CONNECTIONS} connections, loopback`);
  await load(job(`${bareUrl}/bare`, { durationSeconds: 2 }));
  const bareResult = await load(job(`${bareUrl}/bare`));
  describe("bare fastify route", bareResult);
  await load(job(`${apiUrl}/api/v2/deliveries`, { durationSeconds: 2 }));
  const createResult = await load(job(`${apiUrl}/api/v2/deliveries`));
  describe("create delivery", createResult);
  const fixed = await load(job(`${apiUrl}/api/v2/deliveries`, { connections: 64, ratePerSecond: FIXED_RATE }));
  describe(`create at ${FIXED_RATE}/s`, fixed);
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
