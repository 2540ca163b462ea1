import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { deliveryEventPartition } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

// Two accounts of one partition: one replica sends both, from one consumer.
const SLOW_ACCOUNT = 301;
const FAST_ACCOUNT = 317;
const MEMORY_WAIT_MS = 200;

describe("a slow endpoint", () => {
  let dispatcher: TestDispatcher;
  let slow: Receiver;
  let fast: Receiver;

  before(async () => {
    assert.equal(deliveryEventPartition(SLOW_ACCOUNT), deliveryEventPartition(FAST_ACCOUNT));
    dispatcher = await startTestDispatcher({
      env: {
        WEBHOOKS_ENDPOINT_CONCURRENCY: "1",
        WEBHOOKS_MEMORY_WAIT_MS: String(MEMORY_WAIT_MS),
        WEBHOOKS_TIMEOUT_MS: "3000",
      },
    });
    slow = await startReceiver(() => ({ status: 200, delayMs: 400 }));
    fast = await startReceiver();
    await createEndpoint(dispatcher, SLOW_ACCOUNT, slow.url);
    await createEndpoint(dispatcher, FAST_ACCOUNT, fast.url);
  });
  after(async () => {
    await dispatcher.close();
    await slow.close();
    await fast.close();
  });

  test("delays only its own account: its waiting webhooks move to the database queue, in order, and the partition flows on", async () => {
    const slowEvents = [];
    for (let sequence = 1; sequence <= 2; sequence++) {
      for (let delivery = 1; delivery <= 6; delivery++) {
        slowEvents.push(makeEvent({ accountId: SLOW_ACCOUNT, deliveryId: 30_100 + delivery, sequence }));
      }
    }
    for (const event of slowEvents) await dispatcher.publish(event);
    const fastEvents = [1, 2, 3].map((delivery) =>
      makeEvent({ accountId: FAST_ACCOUNT, deliveryId: 31_700 + delivery, sequence: 1 }),
    );
    for (const event of fastEvents) await dispatcher.publish(event);

    // One POST at a time of 400 ms: the slow endpoint needs about 5 s for its 12 webhooks.
    await waitFor(async () => fast.received.length === fastEvents.length, 5000, "the other account's webhooks");
    assert.ok(slow.received.length < slowEvents.length, "the other account did not wait for the slow endpoint");

    // What waited longer than WEBHOOKS_MEMORY_WAIT_MS is in the database queue, and every
    // stream message is acknowledged while the slow endpoint still works through them.
    const queued = async () =>
      Number(
        (
          await dispatcher.db
            .selectFrom("messages")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    await waitFor(async () => (await queued()) > 0, 2000, "webhooks moved to the database queue");
    await waitFor(
      async () => (await dispatcher.metric("webhook_consumer_ack_pending_messages")) === 0,
      2000,
      "every stream message acknowledged",
    );
    assert.ok(slow.received.length < slowEvents.length, "acknowledged before they were all sent");

    await waitFor(async () => slow.received.length >= slowEvents.length, 10_000, "the slow endpoint's webhooks");
    assert.equal(new Set(slow.received.map((r) => r.id)).size, slowEvents.length);
    for (let delivery = 1; delivery <= 6; delivery++) {
      const order = slow.received.filter((r) => r.deliveryId === 30_100 + delivery).map((r) => r.sequence);
      assert.deepEqual(order, [1, 2], `delivery ${30_100 + delivery}`);
    }
    assert.ok(slow.maxInFlight <= 1, `one POST at a time, saw ${slow.maxInFlight}`);
  });
});
