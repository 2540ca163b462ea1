/**
 * Quote throughput and latency over real NATS, beside a bare request/reply echo measured in
 * the same run as the ceiling. One pricing replica and one echo responder, each in its own
 * process (bench/responders.ts); this process is the load generator.
 *
 *   1. closed loop: CONCURRENCY requests in flight, echo and quote alternating in ROUNDS rounds
 *      of ROUND_MS each (so a burst of load from elsewhere on the machine hits both alike) → req/s;
 *   2. open loop at a fixed RATE per second: echo for ECHO_FIXED_MS, quote for QUOTE_FIXED_MS → p50/p99/max.
 *
 * Targets (issue 4): quote rate ≥ 0.5 × echo rate, quote p99 ≤ 5 ms at 1,000/s.
 * The last line is `ratio: <quote/echo>` with 2 decimals.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { formatTimestamp, type QuoteReply } from "@dos/contracts";
import { createPricingHarness } from "../test/pricing-harness.ts";

const CONCURRENCY = 32;
const ROUNDS = 5;
const ROUND_MS = 1_000;
const WARMUP_MS = 1_000;
const RATE = 1_000;
const QUOTE_FIXED_MS = 10_000;
const ECHO_FIXED_MS = 5_000;
const ACCOUNTS = 20;
const HOUR = 3_600_000;

const harness = await createPricingHarness("pricing_bench");
const nc = harness.client.nc;
const { quoteSubject } = harness.names.services.pricing;
// A bench-only subject under the run's random namespace: no service uses it, no contract names it.
const echoSubject = `${harness.namespace}.bench.echo`;

/** Starts bench/responders.ts in its own process and waits until it answers. */
async function spawnResponder(...args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("./responders.ts", import.meta.url)), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = await Promise.race([
    once(child.stdout as NodeJS.ReadableStream, "data"),
    once(child, "exit").then(() => {
      throw new Error(`responder ${args[0]} exited before it was ready`);
    }),
  ]);
  if (!String(line).startsWith("ready")) throw new Error(`responder ${args[0]} said ${String(line)}`);
  return child;
}
const responders = [
  await spawnResponder("pricing", harness.namespace, harness.databaseUrl),
  await spawnResponder("echo", harness.namespace, echoSubject),
];

for (let account = 1; account <= ACCOUNTS; account++) {
  await nc.request(
    harness.names.subjects.pricingTariffsCreate,
    JSON.stringify({
      account_id: account,
      base_cents: { outbound: 900 + account, inbound: 1100, other: 1400 },
      per_package_cents: 100,
      weight_bands: [
        { from_kg: 10, cents: 250 },
        { from_kg: 30, cents: 800 },
      ],
      volume_bands: [{ from_dm3: 100, cents: 300 }],
      slot_surcharges: [{ shorter_than_minutes: 60, cents: 500 }],
      lead_time_surcharges: [{ shorter_than_minutes: 24 * 60, cents: 400 }],
      minimum_cents: 1000,
    }),
    { timeout: 5000 },
  );
}
const now = Date.now();
const payloads = Array.from({ length: ACCOUNTS }, (_, i) =>
  JSON.stringify({
    account_id: i + 1,
    direction: "outbound",
    tasks: [
      {
        kind: "dropoff",
        slot_starting_at: formatTimestamp(new Date(now + 20 * HOUR)),
        slot_ending_at: formatTimestamp(new Date(now + 20.75 * HOUR)),
      },
    ],
    packages: [
      { amount: 2, volume_dm3: 30, weight_kg: 6 },
      { amount: 1, volume_dm3: 12, weight_kg: 1.5 },
    ],
    requested_at: formatTimestamp(new Date(now)),
  }),
);

type Call = (i: number) => Promise<void>;
const callEcho: Call = async (i) => {
  const msg = await nc.request(echoSubject, payloads[i % ACCOUNTS], { timeout: 5000 });
  msg.json();
};
const callQuote: Call = async (i) => {
  const msg = await nc.request(quoteSubject, payloads[i % ACCOUNTS], { timeout: 5000 });
  if (msg.json<QuoteReply>().price_cents === null) throw new Error("a quote came back without a price");
};

async function closedLoop(call: Call, durationMs: number): Promise<number> {
  let done = 0;
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) await call(done++);
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function fixedRate(call: Call, rate: number, durationMs: number) {
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  let sent = 0;
  while (performance.now() - started < durationMs) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; sent < due; sent++) {
      const t0 = performance.now();
      inFlight.push(call(sent).then(() => void latencies.push(performance.now() - t0)));
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { count: latencies.length, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? 0 };
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
await closedLoop(callEcho, WARMUP_MS);
await closedLoop(callQuote, WARMUP_MS);
let echoRate = 0;
let quoteRate = 0;
for (let round = 0; round < ROUNDS; round++) {
  echoRate += (await closedLoop(callEcho, ROUND_MS)) / ROUNDS;
  quoteRate += (await closedLoop(callQuote, ROUND_MS)) / ROUNDS;
}
const loop = `closed loop, ${CONCURRENCY} in flight, ${ROUNDS} alternating rounds of ${ROUND_MS / 1000} s`;
console.log(`echo  ${loop}: ${echoRate.toFixed(0)} req/s`);
console.log(`quote ${loop}: ${quoteRate.toFixed(0)} quotes/s`);
const echoFixed = await fixedRate(callEcho, RATE, ECHO_FIXED_MS);
console.log(
  `echo  at ${RATE}/s for ${ECHO_FIXED_MS / 1000} s (${echoFixed.count}): p50 ${ms(echoFixed.p50)}, p99 ${ms(echoFixed.p99)}, max ${ms(echoFixed.max)}`,
);
const quoteFixed = await fixedRate(callQuote, RATE, QUOTE_FIXED_MS);
console.log(
  `quote at ${RATE}/s for ${QUOTE_FIXED_MS / 1000} s (${quoteFixed.count}): p50 ${ms(quoteFixed.p50)}, p99 ${ms(quoteFixed.p99)}, max ${ms(quoteFixed.max)}`,
);

const ratio = quoteRate / echoRate;
const met = ratio >= 0.5 && quoteFixed.p99 <= 5;
console.log(`target (ratio >= 0.50, quote p99 <= 5 ms): ${met ? "met" : "NOT met"}`);
for (const child of responders) {
  child.kill("SIGTERM");
  await once(child, "exit");
}
await harness.close();
console.log(`ratio: ${ratio.toFixed(2)}`);
