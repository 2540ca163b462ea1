/**
 * Benchmark: webhooks delivered per second to a local receiver, beside a plain HTTP POST loop
 * to the same receiver in the same run, and the latency from an event's publish to its
 * arrival at the receiver at a steady 200 events/s. The publish on DELIVERY_EVENTS stands in
 * for the commit of the delivery change (delivery-api's outbox relay publishes right after the
 * commit; its own delay is not counted here). Loopback only; about 25 s.
 *
 * The receiver is a process of its own (bench/receiver.ts), as a client's system is, and so is
 * the publisher (bench/publisher.ts), as delivery-api's relay is: this process holds the
 * dispatcher and the plain loop's client, which both POST to that receiver. The plain loop POSTs the same
 * bodies one after another over a keep-alive connection (BENCH_PLAIN_CONCURRENCY=8 runs 8 at a
 * time, like the dispatcher's per-endpoint limit). Plain loop and dispatcher burst alternate in
 * rounds, so the load of a shared machine hits both; a first round only warms up.
 *
 * The last line is `ratio: <dispatcher/plain>`, the median of the rounds' ratios.
 */
import { Agent } from "undici";
import { createEndpoint, startTestDispatcher } from "../test/dispatcher.ts";
import { ACCOUNT, benchEvents, EVENTS_PER_DELIVERY } from "./bench-events.ts";
import { median, plainLoop, startPublisher, startReceiver } from "./bench-parties.ts";
import { epochMs } from "./clock.ts";
import { type CpuSample, createCpuMeter, formatCpu } from "./cpu-meter.ts";

const BURST_DELIVERIES = 500;
const PLAIN_CONCURRENCY = Number(process.env.BENCH_PLAIN_CONCURRENCY ?? 1);
const RATE_PER_SECOND = 200;
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

// The receiver reports when each webhook-id first arrived, in batches.
const receiver = await startReceiver();
const { arrivals, waitForArrivals, url } = receiver;

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
const config = dispatcher.config;
await createEndpoint(dispatcher, ACCOUNT, url);
const publisher = await startPublisher(config.NATS_URL, dispatcher.namespace);
const { publish } = publisher;
const sampleCpu = createCpuMeter(dispatcher.db, config.NATS_URL, {
  receiver: receiver.process.pid as number,
  publisher: publisher.process.pid as number,
});

/** CPU spent by each party in the counted rounds (difference of samples around each). */
const zero: CpuSample = { process: 0, receiver: 0, publisher: 0, postgres: 0, nats: 0 };
const spent = { plain: { ...zero }, dispatch: { ...zero } };
const addSpent = (total: CpuSample, before: CpuSample, after: CpuSample) => {
  for (const key of Object.keys(total) as Array<keyof CpuSample>) total[key] += after[key] - before[key];
};

let nextDelivery = 1;
/** The next deliveries' range, never used before: every event id is new to the dispatcher. */
const deliveries = (count: number) => {
  const first = nextDelivery;
  nextDelivery += count;
  return { first, deliveries: count };
};

// 1 and 2 alternate in rounds, so that the load of a shared machine hits both alike.
const agent = new Agent({ keepAliveTimeout: 10_000 });

/** 1. Plain loop: the same bodies POSTed by a keep-alive client, PLAIN_CONCURRENCY at a time. */
async function plainRound(): Promise<number> {
  const range = deliveries(BURST_DELIVERIES);
  const bodies = benchEvents(range.first, range.deliveries).map((event) => JSON.stringify(event));
  const rate = await plainLoop(agent, url, bodies, PLAIN_CONCURRENCY);
  arrivals.clear();
  return rate;
}

/** 2. Dispatcher, burst: every event published at once; time until the last one arrived. */
async function burstRound(): Promise<{ rate: number; publishSeconds: number }> {
  const burst = { kind: "burst", ...deliveries(BURST_DELIVERIES) } as const;
  const started = epochMs();
  const { seconds: publishSeconds, publishedAt } = await publish(burst);
  await waitForArrivals(publishedAt.length, 40_000);
  // Until the last webhook reached the receiver (not until its report reached this process).
  const rate = publishedAt.length / ((Math.max(...arrivals.values()) - started) / 1000);
  arrivals.clear();
  return { rate, publishSeconds };
}

const rounds: Array<{ plain: number; dispatch: number; publishSeconds: number }> = [];
// A first round warms both up (the JIT, connections, plans) and is not counted.
for (let round = 0; round <= ROUNDS; round++) {
  const beforePlain = await sampleCpu();
  const plain = await plainRound();
  const beforeBurst = await sampleCpu();
  const { rate, publishSeconds } = await burstRound();
  const afterBurst = await sampleCpu();
  if (round === 0) continue;
  rounds.push({ plain, dispatch: rate, publishSeconds });
  addSpent(spent.plain, beforePlain, beforeBurst);
  addSpent(spent.dispatch, beforeBurst, afterBurst);
}
await agent.close();

// 3. Dispatcher, steady 200 events/s: latency from publish to arrival.
const beforeSteady = await sampleCpu();
const { publishedAt: steady } = await publish({
  kind: "paced",
  ...deliveries((RATE_PER_SECOND * RATE_SECONDS) / EVENTS_PER_DELIVERY),
  perSecond: RATE_PER_SECOND,
});
await waitForArrivals(steady.length, 20_000);
const steadyCpu = formatCpu(beforeSteady, await sampleCpu(), steady.length);
const latencies = steady
  .map(([id, publishedAt]) => (arrivals.get(id) ?? Number.NaN) - publishedAt)
  .sort((a, b) => a - b);
const percentile = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? Number.NaN;

await dispatcher.close();
receiver.process.disconnect();
publisher.process.disconnect();

const fixed = (n: number, digits = 1) => n.toFixed(digits);
console.log(
  `setup: one endpoint on loopback (a receiver process answering 204 at once), events from a publisher process, WEBHOOKS_CONCURRENCY=${config.WEBHOOKS_CONCURRENCY}, ` +
    `WEBHOOKS_ENDPOINT_CONCURRENCY=${config.WEBHOOKS_ENDPOINT_CONCURRENCY}, ${BURST_DELIVERIES} deliveries x ${EVENTS_PER_DELIVERY} events per round, ${ROUNDS} rounds after a warm-up round`,
);
console.log(
  `plain: ${PLAIN_CONCURRENCY} POST(s) in flight over keep-alive, body and content-type only; ` +
    `dispatcher: at most ${config.WEBHOOKS_ENDPOINT_CONCURRENCY} POSTs in flight to the endpoint, each event published ` +
    "on DELIVERY_EVENTS, recorded, signed, POSTed in order per delivery, its attempt logged",
);
for (const [i, round] of rounds.entries()) {
  console.log(
    `round ${i + 1}: plain ${fixed(round.plain)} req/s, dispatcher ${fixed(round.dispatch)} webhooks/s ` +
      `(publishing took ${fixed(round.publishSeconds, 2)} s), ratio ${fixed(round.dispatch / round.plain, 2)}`,
  );
}
console.log(
  `dispatcher at ${RATE_PER_SECOND} events/s for ${RATE_SECONDS} s, publish -> receiver: ` +
    `p50 ${fixed(percentile(50))} ms, p99 ${fixed(percentile(99))} ms, max ${fixed(percentile(100))} ms`,
);
const counted = ROUNDS * BURST_DELIVERIES * EVENTS_PER_DELIVERY;
console.log(
  `CPU per plain POST: ${formatCpu(zero, spent.plain, counted)} (client in this process, receiver in its own)`,
);
console.log(
  `CPU per webhook, bursts: ${formatCpu(zero, spent.dispatch, counted)} (dispatcher in this process; receiver and publisher in their own)`,
);
console.log(`CPU per webhook at ${RATE_PER_SECOND} events/s: ${steadyCpu}`);
console.log(`ratio: ${fixed(median(rounds.map((r) => r.dispatch / r.plain)), 2)}`);
process.exit(0);
