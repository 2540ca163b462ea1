/**
 * The floor under any durable design of this dispatcher, beside the same plain POST loop as
 * dispatch.bench.ts (same receiver and publisher processes, same bursts): events consumed from
 * DELIVERY_EVENTS by a JetStream pull consumer, each signed and POSTed (8 in flight, as
 * WEBHOOKS_ENDPOINT_CONCURRENCY), its attempt written as a row (rows batched while POSTs go on),
 * and the event acknowledged only once its row is committed. No order per delivery, no retries,
 * no queue rows: what the webhooks cost when JetStream is the queue and PostgreSQL only logs
 * attempts. It tells how far the landed design (a queue in PostgreSQL) is from what the
 * machine allows. `npm run bench:floor -w @dos/webhook-dispatcher`, about 15 s.
 *
 * Last line: `floor ratio: <floor/plain>`, the median of the rounds' ratios.
 */
import { ensureTopology, natsNames } from "@dos/contracts";
import { connectNats, createDatabase, createLogger } from "@dos/service-kit";
import { createTestDatabase, deleteNamespace, randomNamespace, testInfra } from "@dos/service-kit/testing";
import { AckPolicy, DeliverPolicy, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Agent } from "undici";
import { generateSecret, signedHeaders, signingKey } from "../src/signing/signing.ts";
import { benchEvents } from "./bench-events.ts";
import { median, plainLoop, startPublisher, startReceiver } from "./bench-parties.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BURST_DELIVERIES = 500;
const IN_FLIGHT = 8;
const ENDPOINT_ID = "00000000-0000-4000-8000-000000000001";

const receiver = await startReceiver();
const { arrivals, waitForArrivals, url } = receiver;
const { origin, pathname } = new URL(url);

const { natsUrl } = testInfra();
const namespace = randomNamespace();
const names = natsNames(namespace);
const { nc } = await connectNats(natsUrl, "webhook-dispatcher-floor-bench", createLogger("floor-bench", "warn"));
await ensureTopology(nc, { namespace });
const database = await createTestDatabase("webhooks_floor");
const { pool, close: closePool } = createDatabase({
  url: database.url,
  schema: "public",
  applicationName: "webhook-dispatcher-floor-bench",
});
// The attempts table of the landed schema, reduced to what a delivered attempt writes.
await pool.query(`create table attempts (
  id bigint generated always as identity primary key,
  event_id uuid not null, endpoint_id uuid not null, status_code int, duration_ms int, attempted_at timestamptz not null)`);
await pool.query("create index attempts_endpoint on attempts (endpoint_id, id desc)");
await pool.query("create index attempts_event on attempts (event_id)");

const publisher = await startPublisher(natsUrl, namespace);

// The floor dispatcher: consume, sign, POST, log the attempt, then acknowledge.
const key = signingKey(generateSecret());
const webhooks = new Agent({ keepAliveTimeout: 10_000 });
const jsm = await jetstreamManager(nc);
await jsm.consumers.add(names.streams.deliveryEvents, {
  durable_name: "floor",
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.All,
  max_ack_pending: 4000,
});
const consumer = await jetstream(nc).consumers.get(names.streams.deliveryEvents, "floor");
const messages = await consumer.consume({ max_messages: 500 });

interface Attempt {
  msg: JsMsg;
  eventId: string;
  statusCode: number;
  durationMs: number;
  attemptedAt: Date;
}
let attempts: Attempt[] = [];
let logging = false;
/** Writes the attempts gathered so far in one statement, then acknowledges their events. */
async function logAttempts(): Promise<void> {
  if (logging || attempts.length === 0) return;
  logging = true;
  const batch = attempts;
  attempts = [];
  await pool.query(
    `insert into attempts (event_id, endpoint_id, status_code, duration_ms, attempted_at)
     select * from unnest($1::uuid[], $2::uuid[], $3::int[], $4::int[], $5::timestamptz[])`,
    [
      batch.map((a) => a.eventId),
      batch.map(() => ENDPOINT_ID),
      batch.map((a) => a.statusCode),
      batch.map((a) => a.durationMs),
      batch.map((a) => a.attemptedAt.toISOString()),
    ],
  );
  for (const attempt of batch) attempt.msg.ack();
  logging = false;
  await logAttempts();
}

async function send(msg: JsMsg): Promise<void> {
  const body = msg.string();
  const eventId = (JSON.parse(body) as { id: string }).id;
  const attemptedAt = new Date();
  const started = performance.now();
  const response = await webhooks.request({
    origin,
    path: pathname,
    method: "POST",
    headers: { "content-type": "application/json", ...signedHeaders([key], eventId, body, attemptedAt) },
    body,
  });
  await response.body.dump();
  attempts.push({
    msg,
    eventId,
    statusCode: response.statusCode,
    durationMs: Math.round(performance.now() - started),
    attemptedAt,
  });
  void logAttempts();
}

let inFlight = 0;
let slotFreed: (() => void) | undefined;
const consuming = (async () => {
  for await (const msg of messages) {
    while (inFlight >= IN_FLIGHT) await new Promise<void>((resolve) => (slotFreed = resolve));
    inFlight++;
    void send(msg).finally(() => {
      inFlight--;
      slotFreed?.();
      slotFreed = undefined;
    });
  }
})();

// Plain loop and floor burst alternate in rounds; a first round warms up and is not counted.
const plainAgent = new Agent({ keepAliveTimeout: 10_000 });
let nextDelivery = 1;
const ratios: number[] = [];
for (let round = 0; round <= ROUNDS; round++) {
  const bodies = benchEvents(nextDelivery, BURST_DELIVERIES).map((event) => JSON.stringify(event));
  nextDelivery += BURST_DELIVERIES;
  const plain = await plainLoop(plainAgent, url, bodies, 1);
  arrivals.clear();
  const started = Date.now();
  const { publishedAt } = await publisher.publish({ kind: "burst", first: nextDelivery, deliveries: BURST_DELIVERIES });
  nextDelivery += BURST_DELIVERIES;
  await waitForArrivals(publishedAt.length, 40_000);
  const floor = publishedAt.length / ((Math.max(...arrivals.values()) - started) / 1000);
  arrivals.clear();
  if (round === 0) continue;
  ratios.push(floor / plain);
  console.log(
    `round ${round}: plain ${plain.toFixed(0)} req/s, floor ${floor.toFixed(0)} webhooks/s, ratio ${(floor / plain).toFixed(2)}`,
  );
}

// Every webhook sent has its attempt row once the last acknowledgements are in.
const sent = (ROUNDS + 1) * BURST_DELIVERIES * 4;
for (let i = 0; i < 100 && (attempts.length > 0 || logging); i++) await new Promise((r) => setTimeout(r, 20));
const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from attempts");
console.log(`attempt rows: ${rows[0]?.n} for ${sent} webhooks`);
messages.stop();
await consuming;
await Promise.all([closePool(), webhooks.close(), plainAgent.close()]);
await database.drop();
// The namespace's streams and buckets go with it (ensureTopology made them for this run only).
await deleteNamespace(nc, namespace);
await nc.close();
receiver.process.disconnect();
publisher.process.disconnect();
console.log(`floor ratio: ${median(ratios).toFixed(2)}`);
