import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { natsNames } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { jetstream } from "@nats-io/jetstream";
import { Webhook } from "standardwebhooks";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

describe("delivery of events to endpoints", () => {
  let dispatcher: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    dispatcher = await startTestDispatcher();
    receiver = await startReceiver();
  });
  after(async () => {
    await dispatcher.close();
    await receiver.close();
  });

  test("every event is POSTed with a Standard Webhooks signature and the event id as webhook-id", async () => {
    const endpoint = await createEndpoint(dispatcher, 101, `${receiver.url}?account=101`);
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const events = [
      makeEvent({ accountId: 101, deliveryId: 5001, sequence: 1 }),
      makeEvent({
        accountId: 101,
        deliveryId: 5001,
        sequence: 2,
        type: "delivery.status_changed",
        status: "scheduled",
      }),
      makeEvent({ accountId: 101, deliveryId: 5002, sequence: 1 }),
    ];
    for (const event of events) await dispatcher.publish(event);

    const mine = () => receiver.received.filter((r) => r.deliveryId === 5001 || r.deliveryId === 5002);
    await waitFor(async () => mine().length >= 3, 10_000, "three webhooks");
    const verifier = new Webhook(endpoint.secret);
    for (const event of events) {
      const got = mine().find((r) => r.id === event.id);
      assert.ok(got, `event ${event.id} was received`);
      assert.deepEqual(verifier.verify(got.body, got.headers), event);
      assert.equal(got.headers["content-type"], "application/json");
      assert.ok(Math.abs(Number(got.timestamp) - Date.now() / 1000) < 10, "the timestamp is the time of sending");
    }

    const attempts = await waitFor(async () => {
      const reply = await dispatcher.request<Array<Record<string, unknown>>>("attempts", {
        account_id: 101,
        webhook_id: endpoint.id,
      });
      return reply.ok && reply.value.length === 3 ? reply.value : undefined;
    });
    for (const attempt of attempts) {
      assert.equal(attempt.status_code, 204);
      assert.equal(attempt.outcome, "delivered");
      assert.equal(attempt.attempt, 1);
      assert.equal(attempt.error, null);
      assert.equal(attempt.next_attempt_at, null);
    }
    assert.deepEqual(new Set(attempts.map((a) => a.event_id)), new Set(events.map((e) => e.id)));
    assert.equal(await dispatcher.metric("webhook_attempts_total", 'outcome="delivered"'), 3);
  });

  test("an endpoint receives only the kinds it subscribed to and only its own account's events", async () => {
    const cancelledOnly = await startReceiver();
    try {
      await createEndpoint(dispatcher, 102, cancelledOnly.url, ["delivery.cancelled"]);
      const created = makeEvent({ accountId: 102, deliveryId: 6001, sequence: 1 });
      const cancelled = makeEvent({
        accountId: 102,
        deliveryId: 6001,
        sequence: 2,
        type: "delivery.cancelled",
        status: "cancelled",
      });
      const otherAccount = makeEvent({ accountId: 103, deliveryId: 6002, sequence: 1, type: "delivery.cancelled" });
      for (const event of [created, otherAccount, cancelled]) await dispatcher.publish(event);
      await waitFor(async () => cancelledOnly.received.length >= 1, 10_000, "the cancelled event");
      // A later event of the account proves the earlier ones had their chance to arrive.
      const later = makeEvent({ accountId: 102, deliveryId: 6003, sequence: 1, type: "delivery.cancelled" });
      await dispatcher.publish(later);
      await waitFor(async () => cancelledOnly.received.length >= 2, 10_000, "the later event");
      assert.deepEqual(
        cancelledOnly.received.map((r) => r.id),
        [cancelled.id, later.id],
      );
    } finally {
      await cancelledOnly.close();
    }
  });

  test("a re-published event (same id) is not sent twice", async () => {
    const own = await startReceiver();
    try {
      await createEndpoint(dispatcher, 104, own.url);
      const event = makeEvent({ accountId: 104, deliveryId: 7001, sequence: 1 });
      await dispatcher.publish(event);
      await waitFor(async () => own.received.length >= 1, 10_000, "the event");
      // Beyond JetStream's duplicate window the consumer itself dedupes on the event id.
      const subject = natsNames(dispatcher.namespace).subjects.deliveryEvent(104, 7001, event.type);
      await jetstream(dispatcher.nats.nc).publish(subject, JSON.stringify(event));
      const next = makeEvent({ accountId: 104, deliveryId: 7001, sequence: 2 });
      await dispatcher.publish(next);
      await waitFor(async () => own.received.length >= 2, 10_000, "the next event");
      assert.deepEqual(
        own.received.map((r) => r.id),
        [event.id, next.id],
      );
    } finally {
      await own.close();
    }
  });

  test("a malformed event is dropped and does not hold back the events after it", async () => {
    const own = await startReceiver();
    try {
      await createEndpoint(dispatcher, 105, own.url);
      const good = makeEvent({ accountId: 105, deliveryId: 7101, sequence: 1 });
      const subject = natsNames(dispatcher.namespace).subjects.deliveryEvent(105, 7101, good.type);
      const { delivery_id: _, ...withoutDelivery } = makeEvent({ accountId: 105, deliveryId: 7102, sequence: 1 });
      const malformed = [
        "{not json",
        JSON.stringify(withoutDelivery),
        JSON.stringify({ ...makeEvent({ accountId: 105, deliveryId: 7103, sequence: 1 }), occurred_at: "yesterday" }),
        JSON.stringify({ ...makeEvent({ accountId: 105, deliveryId: 7104, sequence: 1 }), id: "not-a-uuid" }),
      ];
      const before = await dispatcher.metric("webhook_events_received_total", 'result="malformed"');
      const js = jetstream(dispatcher.nats.nc);
      for (const body of malformed) await js.publish(subject, body);
      await dispatcher.publish(good);
      await waitFor(async () => own.received.length >= 1, 10_000, "the good event");
      await waitFor(
        async () => (await dispatcher.metric("webhook_events_received_total", 'result="malformed"')) - before === 4,
        5000,
        "four malformed events counted",
      );
      assert.deepEqual(
        own.received.map((r) => r.id),
        [good.id],
      );
    } finally {
      await own.close();
    }
  });
});
