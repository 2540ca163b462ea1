import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const LIMIT = 3;
const DELIVERIES = 60;
const EVENTS_PER_DELIVERY = 2;
/**
 * Bursts one after the other, to an endpoint whose account one of the two replicas owns: the
 * limit holds over replicas because that replica alone sends to it, through its send gate.
 */
const BURSTS = 4;

const deliveryOf = (burst: number, delivery: number) => 91_000 + burst * 1000 + delivery;

describe("POSTs in flight to one endpoint", () => {
  let first: TestDispatcher;
  let second: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    const env = { WEBHOOKS_ENDPOINT_CONCURRENCY: String(LIMIT) };
    first = await startTestDispatcher({ env });
    second = await startTestDispatcher({
      env,
      shareWith: { databaseUrl: first.databaseUrl, namespace: first.namespace },
    });
    // Slow enough answers that many due messages pile up behind the limit.
    receiver = await startReceiver(() => ({ status: 204, delayMs: 15 }));
  });
  after(async () => {
    await second.close();
    await first.close();
    await receiver.close();
  });

  test("never exceed WEBHOOKS_ENDPOINT_CONCURRENCY over two replicas, however many are due, and keep each delivery's order", async () => {
    await createEndpoint(first, 900, receiver.url);
    const events = [];
    for (let burst = 0; burst < BURSTS; burst++) {
      const batch = [];
      for (let sequence = 1; sequence <= EVENTS_PER_DELIVERY; sequence++) {
        for (let delivery = 1; delivery <= DELIVERIES; delivery++) {
          batch.push(makeEvent({ accountId: 900, deliveryId: deliveryOf(burst, delivery), sequence }));
        }
      }
      await Promise.all(batch.map((event) => first.publish(event)));
      events.push(...batch);
      await waitFor(async () => receiver.received.length >= events.length, 20_000, `${events.length} webhooks`);
    }

    assert.ok(receiver.maxInFlight <= LIMIT, `at most ${LIMIT} at once, saw ${receiver.maxInFlight}`);
    assert.equal(receiver.maxInFlight, LIMIT, "the limit is used");
    assert.equal(new Set(receiver.received.map((r) => r.id)).size, events.length);
    for (let burst = 0; burst < BURSTS; burst++) {
      for (let delivery = 1; delivery <= DELIVERIES; delivery++) {
        const id = deliveryOf(burst, delivery);
        const order = receiver.received.filter((r) => r.deliveryId === id).map((r) => r.sequence);
        assert.deepEqual(order, [1, 2], `delivery ${id}`);
      }
    }
  });
});
