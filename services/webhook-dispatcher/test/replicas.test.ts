import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const DELIVERIES = 20;
const EVENTS_PER_DELIVERY = 5;

describe("several dispatcher replicas", () => {
  let first: TestDispatcher;
  let second: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    first = await startTestDispatcher();
    second = await startTestDispatcher({ shareWith: { databaseUrl: first.databaseUrl, namespace: first.namespace } });
    // Uneven answer times shuffle which replica finishes first.
    receiver = await startReceiver(() => ({ status: 200, delayMs: Math.floor(Math.random() * 25) }));
  });
  after(async () => {
    await second.close();
    await first.close();
    await receiver.close();
  });

  test("share the work, send every event once, and keep the order of each delivery", async () => {
    await createEndpoint(first, 800, receiver.url);
    for (let sequence = 1; sequence <= EVENTS_PER_DELIVERY; sequence++) {
      for (let delivery = 1; delivery <= DELIVERIES; delivery++) {
        await first.publish(makeEvent({ accountId: 800, deliveryId: 81_000 + delivery, sequence }));
      }
    }
    const total = DELIVERIES * EVENTS_PER_DELIVERY;
    await waitFor(async () => receiver.received.length >= total, 20_000, `${total} webhooks`);
    // Nothing more arrives: every event was sent exactly once.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(receiver.received.length, total);
    assert.equal(new Set(receiver.received.map((r) => r.id)).size, total);
    for (let delivery = 1; delivery <= DELIVERIES; delivery++) {
      const order = receiver.received.filter((r) => r.deliveryId === 81_000 + delivery).map((r) => r.sequence);
      assert.deepEqual(order, [1, 2, 3, 4, 5], `delivery ${81_000 + delivery}`);
    }
    const byFirst = await first.metric("webhook_attempts_total", 'outcome="delivered"');
    const bySecond = await second.metric("webhook_attempts_total", 'outcome="delivered"');
    assert.equal(byFirst + bySecond, total);
    assert.ok(byFirst > 0 && bySecond > 0, `both replicas worked (${byFirst} and ${bySecond})`);
  });
});
