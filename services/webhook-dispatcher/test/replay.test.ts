import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

describe("replay", () => {
  let dispatcher: TestDispatcher;
  let receiver: Receiver;
  let cancelledReceiver: Receiver;
  /** While true, every attempt at sequence 1 of delivery 9001 fails. */
  let failFirst = true;

  before(async () => {
    dispatcher = await startTestDispatcher();
    receiver = await startReceiver((request) => ({
      status: failFirst && request.deliveryId === 9001 && request.sequence === 1 ? 500 : 200,
    }));
    cancelledReceiver = await startReceiver();
  });
  after(async () => {
    await dispatcher.close();
    await receiver.close();
    await cancelledReceiver.close();
  });

  test("sends again, read back from the stream, every event since then, delivered or dead-lettered, in order per delivery", async () => {
    const endpoint = await createEndpoint(dispatcher, 401, receiver.url);
    const cancelledOnly = await createEndpoint(dispatcher, 401, cancelledReceiver.url, ["delivery.cancelled"]);
    const before = await makeEventAt(dispatcher, 400, 8999);
    const since = new Date();
    const events = [
      makeEvent({ accountId: 401, deliveryId: 9001, sequence: 1 }),
      makeEvent({ accountId: 401, deliveryId: 9001, sequence: 2, type: "delivery.cancelled", status: "cancelled" }),
      makeEvent({ accountId: 401, deliveryId: 9002, sequence: 1 }),
      // Another account's event is never replayed to this one's endpoint.
      makeEvent({ accountId: 417, deliveryId: 9003, sequence: 1 }),
    ];
    for (const event of events) await dispatcher.publish(event);
    const mine = events.slice(0, 3);
    // 9001's first event fails 3 times (TEST_ENV's schedule) and is dead-lettered; the rest go.
    await waitFor(
      async () => receiver.received.some((r) => r.deliveryId === 9001 && r.sequence === 2),
      10_000,
      "the second event after the first's dead letter",
    );
    const dead = await dispatcher.db
      .selectFrom("messages")
      .select("state")
      .where("event_id", "=", mine[0]?.id as string)
      .where("endpoint_id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    assert.equal(dead.state, "dead");
    // 9001: three failed attempts, then its second event; 9002 once; and the one before `since`.
    await waitFor(async () => receiver.received.length >= 6, 10_000, "the first round");

    failFirst = false;
    receiver.received.length = 0;
    const reply = await dispatcher.request<{ replayed: number }>("replay", {
      account_id: 401,
      webhook_id: endpoint.id,
      since: since.toISOString(),
    });
    assert.deepEqual(reply, { ok: true, value: { replayed: 3 } });
    await waitFor(async () => receiver.received.length >= 3, 10_000, "the replayed webhooks");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(
      new Set(receiver.received.map((r) => r.id)),
      new Set(mine.map((e) => e.id)),
      "each of the account's events since then, once, to that endpoint only",
    );
    assert.ok(!receiver.received.some((r) => r.id === before.id), "nothing from before `since`");
    const order = receiver.received.filter((r) => r.deliveryId === 9001).map((r) => r.sequence);
    assert.deepEqual(order, [1, 2]);

    // An endpoint that subscribed to some kinds gets only those again.
    const filtered = await dispatcher.request<{ replayed: number }>("replay", {
      account_id: 401,
      webhook_id: cancelledOnly.id,
      since: since.toISOString(),
    });
    assert.deepEqual(filtered, { ok: true, value: { replayed: 1 } });
    await waitFor(async () => cancelledReceiver.received.length >= 2, 10_000, "the cancelled event again");
    assert.deepEqual(
      cancelledReceiver.received.map((r) => r.id),
      [mine[1]?.id, mine[1]?.id],
    );
  });
});

/** An event of the account published (and sent) before the test's `since`. */
async function makeEventAt(dispatcher: TestDispatcher, waitMs: number, deliveryId: number) {
  const event = makeEvent({ accountId: 401, deliveryId, sequence: 1 });
  await dispatcher.publish(event);
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  return event;
}
