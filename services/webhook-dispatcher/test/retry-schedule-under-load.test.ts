/**
 * The retry schedule holds under the fairness pressure of issue 17's attack: an account with
 * endpoints that hang and one that fails at once, many deliveries, small limits, POSTs timing out
 * and whole queues moving to the database while the retry worker claims. An e2e run once saw the
 * failing endpoint get 3,549 requests in ~20 s where the schedule allows a few dozen: whatever
 * path a webhook takes (memory, database queue, claim, record), each failed POST of it must be
 * followed by the next one only after the schedule's delay.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const ATTACKER = 301;
const HANGING_ENDPOINTS = 6;
/** Few, so that each endpoint drains its first attempts and reaches retries within the window. */
const DELIVERIES = 3;
const TIMEOUT_MS = 2000;
const RETRY_DELAY_MS = 2000;
/** Several timeouts: hanging POSTs give up, their queues move, retries come due, all at once. */
const WINDOW_MS = 12_000;
/** The receiver stamps a request when its body has arrived, a little after the POST began. */
const STAMP_SLACK_MS = 150;
/** The schedule (0, 2 s, 10 min, jitter 0): at most two attempts of a webhook within the window. */
const MOST_ATTEMPTS = 2;

let dispatcher: TestDispatcher;
let hanging: Receiver[];
let failing: Receiver;

before(async () => {
  dispatcher = await startTestDispatcher({
    env: {
      // The hanging endpoints hold 6 of the account's 8 slots: the failing one keeps 2, and its
      // POSTs, retries and moves to the database go on beside the hanging ones' timeouts.
      WEBHOOKS_CONCURRENCY: "16",
      WEBHOOKS_ACCOUNT_CONCURRENCY: "8",
      WEBHOOKS_ENDPOINT_CONCURRENCY: "1",
      WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOKS_MEMORY_WAIT_MS: "300",
      WEBHOOKS_RETRY_SCHEDULE: `0,${RETRY_DELAY_MS},10m`,
      WEBHOOKS_RETRY_JITTER: "0",
    },
  });
  hanging = await Promise.all(
    Array.from({ length: HANGING_ENDPOINTS }, () => startReceiver(() => ({ status: 200, delayMs: 60_000 }))),
  );
  failing = await startReceiver(() => ({ status: 500 }));
  await createEndpoint(dispatcher, ATTACKER, failing.url);
  for (const receiver of hanging) await createEndpoint(dispatcher, ATTACKER, receiver.url);
});
after(async () => {
  await dispatcher.close();
  for (const receiver of [...hanging, failing]) await receiver.close();
});

/** Each webhook-id's arrival times at the receiver, in order. */
function arrivalsById(receiver: Receiver): Map<string, number[]> {
  const byId = new Map<string, number[]>();
  for (const request of receiver.received) byId.set(request.id, [...(byId.get(request.id) ?? []), request.receivedAt]);
  return byId;
}

/** The webhooks that broke the schedule: too many attempts, or one too soon after the previous. */
function scheduleBreaches(receiver: Receiver, minGapMs: number): string[] {
  const breaches: string[] = [];
  for (const [id, times] of arrivalsById(receiver)) {
    const gaps = times.slice(1).map((at, i) => at - (times[i] as number));
    if (times.length > MOST_ATTEMPTS || gaps.some((gap) => gap < minGapMs)) {
      breaches.push(`${id}: ${times.length} attempts, gaps ${gaps.slice(0, 5).join(", ")} ms`);
    }
  }
  return breaches;
}

test("under an account's hanging and failing endpoints, every webhook is retried on its schedule, never sooner", async (t) => {
  const started = Date.now();
  for (let delivery = 1; delivery <= DELIVERIES; delivery++) {
    // Two events a delivery: a queue of two behind each failing or hanging head.
    for (const sequence of [1, 2]) {
      await dispatcher.publish(makeEvent({ accountId: ATTACKER, deliveryId: 40_000 + delivery, sequence }));
    }
  }
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS - (Date.now() - started)));

  const hangingReceived = hanging.reduce((sum, receiver) => sum + receiver.received.length, 0);
  const retriedAt = (receiver: Receiver) =>
    [...arrivalsById(receiver).values()].filter((times) => times.length > 1).length;
  const retried = [failing, ...hanging].reduce((sum, receiver) => sum + retriedAt(receiver), 0);
  t.diagnostic(
    `in ${WINDOW_MS} ms: failing endpoint ${failing.received.length} requests (${retriedAt(failing)} webhooks retried), ` +
      `hanging endpoints ${hangingReceived} (${retried - retriedAt(failing)} retried)`,
  );
  // The scenario ran: the failing endpoint's webhooks got slots beside the hanging ones, and retries came.
  assert.ok(failing.received.length >= DELIVERIES, `the failing endpoint got ${failing.received.length}`);
  assert.ok(retried > 0, "some webhooks were retried within the window");
  assert.deepEqual(scheduleBreaches(failing, RETRY_DELAY_MS - STAMP_SLACK_MS), [], "the failing endpoint");
  // A hanging POST's next attempt comes a timeout plus the delay after it began.
  for (const receiver of hanging) {
    assert.deepEqual(scheduleBreaches(receiver, TIMEOUT_MS + RETRY_DELAY_MS - STAMP_SLACK_MS), [], receiver.url);
  }
});
