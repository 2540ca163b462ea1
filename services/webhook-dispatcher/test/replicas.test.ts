import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DELIVERY_EVENT_PARTITIONS, type DeliveryEvent } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

/** One account per partition (account ids 800..815 cover every remainder of 16). */
const ACCOUNTS = Array.from({ length: DELIVERY_EVENT_PARTITIONS }, (_, i) => 800 + i);
const DELIVERIES_PER_ACCOUNT = 3;
const EVENTS_PER_DELIVERY = 4;

const owned = (dispatcher: TestDispatcher) => dispatcher.metric("webhook_partitions_owned");

/** Every account's deliveries, sequence after sequence as a busy relay publishes them. */
function eventsFrom(firstDelivery: number): DeliveryEvent[] {
  const events = [];
  for (let sequence = 1; sequence <= EVENTS_PER_DELIVERY; sequence++) {
    for (const [a, accountId] of ACCOUNTS.entries()) {
      for (let d = 0; d < DELIVERIES_PER_ACCOUNT; d++) {
        events.push(makeEvent({ accountId, deliveryId: firstDelivery + a * 100 + d, sequence }));
      }
    }
  }
  return events;
}

/** Each delivery's events arrived first in sequence order, and every event arrived. */
function assertOrderedAndComplete(receiver: Receiver, events: DeliveryEvent[]) {
  const ids = new Set(receiver.received.map((r) => r.id));
  for (const event of events) assert.ok(ids.has(event.id), `event ${event.sequence} of ${event.delivery_id} arrived`);
  for (const deliveryId of new Set(events.map((e) => e.delivery_id))) {
    const seen = receiver.received.filter((r) => r.deliveryId === deliveryId).map((r) => r.sequence);
    const firstSeen = seen.filter((sequence, i) => seen.indexOf(sequence) === i);
    assert.deepEqual(firstSeen, [1, 2, 3, 4], `delivery ${deliveryId}: ${seen.join(",")}`);
  }
}

describe("several dispatcher replicas", () => {
  let first: TestDispatcher;
  let second: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    first = await startTestDispatcher();
    second = await startTestDispatcher({ shareWith: { databaseUrl: first.databaseUrl, namespace: first.namespace } });
    // Uneven answer times shuffle which replica finishes first.
    receiver = await startReceiver(() => ({ status: 200, delayMs: Math.floor(Math.random() * 25) }));
    for (const accountId of ACCOUNTS) await createEndpoint(first, accountId, receiver.url);
  });
  after(async () => {
    await second.close();
    await first.close();
    await receiver.close();
  });

  test("share the partitions evenly, send every event once, and keep the order of each delivery", async () => {
    await waitFor(
      async () =>
        (await owned(first)) === DELIVERY_EVENT_PARTITIONS / 2 &&
        (await owned(second)) === DELIVERY_EVENT_PARTITIONS / 2,
      10_000,
      "the partitions shared 8 and 8",
    );
    const events = eventsFrom(81_000);
    for (const event of events) await first.publish(event);
    await waitFor(async () => receiver.received.length >= events.length, 20_000, `${events.length} webhooks`);
    // Nothing more arrives: every event was sent exactly once.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(receiver.received.length, events.length);
    assert.equal(new Set(receiver.received.map((r) => r.id)).size, events.length);
    assertOrderedAndComplete(receiver, events);
    const byFirst = await first.metric("webhook_attempts_total", 'outcome="delivered"');
    const bySecond = await second.metric("webhook_attempts_total", 'outcome="delivered"');
    assert.equal(byFirst + bySecond, events.length);
    assert.ok(byFirst > 0 && bySecond > 0, `both replicas worked (${byFirst} and ${bySecond})`);
  });

  test("a replica that stops hands its partitions over: the others take them, and nothing is lost", async () => {
    const third = await startTestDispatcher({
      shareWith: { databaseUrl: first.databaseUrl, namespace: first.namespace },
    });
    const shared = async () => [await owned(first), await owned(second), await owned(third)];
    // 16 over three replicas: shares of at most 6.
    await waitFor(async () => (await shared()).every((n) => n >= 4 && n <= 6), 10_000, "three shares");
    receiver.received.length = 0;
    const events = eventsFrom(82_000);
    const half = events.length / 2;
    for (const event of events.slice(0, half)) await first.publish(event);
    await third.close();
    for (const event of events.slice(half)) await first.publish(event);
    await waitFor(
      async () => (await owned(first)) + (await owned(second)) === DELIVERY_EVENT_PARTITIONS,
      10_000,
      "the third's partitions taken over",
    );
    await waitFor(
      async () => new Set(receiver.received.map((r) => r.id)).size >= events.length,
      20_000,
      `${events.length} webhooks`,
    );
    assertOrderedAndComplete(receiver, events);
  });
});
