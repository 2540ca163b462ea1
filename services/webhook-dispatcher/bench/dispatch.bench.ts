/**
 * Benchmark: webhooks delivered per second to a local receiver, beside a plain HTTP POST loop
 * to the same receiver in the same run, and the latency from an event's publish to its
 * arrival at the receiver at a steady 200 events/s. The publish on DELIVERY_EVENTS stands in
 * for the commit of the delivery change (delivery-api's outbox relay publishes right after the
 * commit; its own delay is not counted here). Loopback only; about 20 s.
 *
 * The plain loop POSTs the same bodies one after another over a keep-alive connection
 * (BENCH_PLAIN_CONCURRENCY=8 runs 8 at a time, like the dispatcher's per-endpoint limit).
 *
 * The last line is `ratio: <dispatcher/plain>`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { createEndpoint, startTestDispatcher } from "../test/dispatcher.ts";
import { makeEvent } from "../test/events.ts";

const BURST_DELIVERIES = 500;
const EVENTS_PER_DELIVERY = 4;
const PLAIN_CONCURRENCY = Number(process.env.BENCH_PLAIN_CONCURRENCY ?? 1);
const RATE_PER_SECOND = 200;
const RATE_SECONDS = 10;
const ACCOUNT = 1;

// The receiver answers at once and notes when each webhook-id first arrived.
const arrivals = new Map<string, number>();
let onArrival: (() => void) | undefined;
const server = http.createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    const id = request.headers["webhook-id"];
    if (typeof id === "string" && !arrivals.has(id)) arrivals.set(id, performance.now());
    response.writeHead(204).end();
    onArrival?.();
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

const dispatcher = await startTestDispatcher({
  env: {
    WEBHOOKS_RETRY_SCHEDULE: "0,5s,5m",
    WEBHOOKS_RETRY_JITTER: "0.2",
    WEBHOOKS_POLL_INTERVAL_MS: "250",
    WEBHOOKS_TIMEOUT_MS: "5000",
    WEBHOOKS_STATS_INTERVAL_MS: "5000",
    DATABASE_POOL_SIZE: "20",
    WEBHOOKS_ENDPOINT_CONCURRENCY: process.env.BENCH_ENDPOINT_CONCURRENCY ?? "8",
  },
});
await createEndpoint(dispatcher, ACCOUNT, url);
const config = dispatcher.config;

const waitForArrivals = (count: number, timeoutMs: number) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${arrivals.size} of ${count} webhooks arrived`)), timeoutMs);
    onArrival = () => {
      if (arrivals.size >= count) {
        clearTimeout(timer);
        onArrival = undefined;
        resolve();
      }
    };
    onArrival();
  });

let nextDelivery = 1;
const events = (deliveries: number) => {
  const batch = [];
  const first = nextDelivery;
  nextDelivery += deliveries;
  for (let sequence = 1; sequence <= EVENTS_PER_DELIVERY; sequence++) {
    for (let d = first; d < first + deliveries; d++) {
      batch.push(makeEvent({ accountId: ACCOUNT, deliveryId: d, sequence }));
    }
  }
  return batch;
};

// 1. Plain loop: the same bodies POSTed by a keep-alive client, PLAIN_CONCURRENCY at a time.
const plainBodies = events(BURST_DELIVERIES).map((event) => JSON.stringify(event));
const agent = new Agent({ keepAliveTimeout: 10_000 });
const plainStart = performance.now();
let cursor = 0;
await Promise.all(
  Array.from({ length: PLAIN_CONCURRENCY }, async () => {
    while (cursor < plainBodies.length) {
      const body = plainBodies[cursor++] as string;
      const response = await agent.request({
        origin: new URL(url).origin,
        path: "/hooks",
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      await response.body.dump();
    }
  }),
);
const plainSeconds = (performance.now() - plainStart) / 1000;
const plainRate = plainBodies.length / plainSeconds;
await agent.close();
arrivals.clear();

// 2. Dispatcher, burst: every event published at once; time until the last one arrived.
const burst = events(BURST_DELIVERIES);
const burstStart = performance.now();
// Published 100 at a time, as a busy outbox relay would; each publish waits for JetStream's ack.
for (let i = 0; i < burst.length; i += 100)
  await Promise.all(burst.slice(i, i + 100).map((e) => dispatcher.publish(e)));
const publishSeconds = (performance.now() - burstStart) / 1000;
await waitForArrivals(burst.length, 40_000);
const burstSeconds = (performance.now() - burstStart) / 1000;
const dispatchRate = burst.length / burstSeconds;
arrivals.clear();

// 3. Dispatcher, steady 200 events/s: latency from publish to arrival.
const published = new Map<string, number>();
const steady = events((RATE_PER_SECOND * RATE_SECONDS) / EVENTS_PER_DELIVERY);
const steadyStart = performance.now();
for (let i = 0; i < steady.length; i++) {
  const due = steadyStart + (i * 1000) / RATE_PER_SECOND;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const event = steady[i] as (typeof steady)[number];
  published.set(event.id, performance.now());
  await dispatcher.publish(event);
}
await waitForArrivals(steady.length, 20_000);
const latencies = steady
  .map((event) => (arrivals.get(event.id) ?? Number.NaN) - (published.get(event.id) ?? Number.NaN))
  .sort((a, b) => a - b);
const percentile = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? Number.NaN;

await dispatcher.close();
server.closeAllConnections();
server.close();

const fixed = (n: number, digits = 1) => n.toFixed(digits);
console.log(
  `setup: one endpoint on loopback, WEBHOOKS_CONCURRENCY=${config.WEBHOOKS_CONCURRENCY}, ` +
    `WEBHOOKS_ENDPOINT_CONCURRENCY=${config.WEBHOOKS_ENDPOINT_CONCURRENCY}, ${BURST_DELIVERIES} deliveries x ${EVENTS_PER_DELIVERY} events`,
);
console.log(
  `plain POST loop (${PLAIN_CONCURRENCY} in flight, keep-alive): ${plainBodies.length} POSTs in ${fixed(plainSeconds, 2)} s = ${fixed(plainRate)} req/s`,
);
console.log(
  `dispatcher burst: ${burst.length} webhooks in ${fixed(burstSeconds, 2)} s = ${fixed(dispatchRate)} webhooks/s ` +
    `(publishing took ${fixed(publishSeconds, 2)} s), signed, logged, in order per delivery`,
);
console.log(
  `dispatcher at ${RATE_PER_SECOND} events/s for ${RATE_SECONDS} s, publish -> receiver: ` +
    `p50 ${fixed(percentile(50))} ms, p99 ${fixed(percentile(99))} ms, max ${fixed(percentile(100))} ms`,
);
console.log(`ratio: ${fixed(dispatchRate / plainRate, 2)}`);
process.exit(0);
