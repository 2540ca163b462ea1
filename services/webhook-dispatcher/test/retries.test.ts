import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { Webhook } from "standardwebhooks";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Received, startReceiver } from "./receiver.ts";

/** Schedule of TEST_ENV: attempts at 0, +100 ms, +200 ms (3 attempts), no jitter. */
const SECOND_DELAY_MS = 100;
const THIRD_DELAY_MS = 200;

type Attempt = {
  event_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  outcome: string;
  duration_ms: number;
};

describe("retries, dead letters and endpoint health", () => {
  let dispatcher: TestDispatcher;
  let accountId = 200;

  before(async () => {
    dispatcher = await startTestDispatcher({ env: { WEBHOOKS_TIMEOUT_MS: "300" } });
  });
  after(async () => {
    await dispatcher.close();
  });

  const attemptsOf = async (webhookId: string, account: number, count: number) =>
    waitFor(
      async () => {
        const reply = await dispatcher.request<Attempt[]>("attempts", { account_id: account, webhook_id: webhookId });
        return reply.ok && reply.value.length >= count ? reply.value.reverse() : undefined;
      },
      10_000,
      `${count} attempts`,
    );

  test("a failing receiver sees the same webhook-id again on the schedule, each signed anew", async () => {
    const account = ++accountId;
    const receiver = await startReceiver((_request, all) => ({ status: all.length < 3 ? 500 : 200 }));
    try {
      const endpoint = await createEndpoint(dispatcher, account, receiver.url);
      const event = makeEvent({ accountId: account, deliveryId: 8001, sequence: 1 });
      await dispatcher.publish(event);
      await waitFor(async () => receiver.received.length >= 3, 10_000, "three attempts");
      const verifier = new Webhook(endpoint.secret);
      for (const request of receiver.received) {
        assert.equal(request.id, event.id);
        assert.deepEqual(verifier.verify(request.body, request.headers), event);
      }
      const [first, second, third] = receiver.received as [Received, Received, Received];
      assert.ok(second.receivedAt - first.receivedAt >= SECOND_DELAY_MS, "second attempt after 100 ms");
      assert.ok(third.receivedAt - second.receivedAt >= THIRD_DELAY_MS, "third attempt after 200 ms");
      const attempts = await attemptsOf(endpoint.id, account, 3);
      assert.deepEqual(
        attempts.map((a) => [a.attempt, a.status_code, a.outcome, a.error]),
        [
          [1, 500, "retrying", "endpoint answered 500"],
          [2, 500, "retrying", "endpoint answered 500"],
          [3, 200, "delivered", null],
        ],
      );
    } finally {
      await receiver.close();
    }
  });

  test("a receiver that times out is retried, and the attempt says it timed out", async () => {
    const account = ++accountId;
    const receiver = await startReceiver((_request, all) =>
      all.length === 1 ? { status: 200, delayMs: 1000 } : { status: 200 },
    );
    try {
      const endpoint = await createEndpoint(dispatcher, account, receiver.url);
      await dispatcher.publish(makeEvent({ accountId: account, deliveryId: 8002, sequence: 1 }));
      const attempts = await attemptsOf(endpoint.id, account, 2);
      assert.equal(attempts[0]?.status_code, null);
      assert.equal(attempts[0]?.error, "timed out after 300 ms");
      assert.equal(attempts[0]?.outcome, "retrying");
      assert.ok((attempts[0]?.duration_ms ?? 0) >= 290);
      assert.equal(attempts[1]?.outcome, "delivered");
    } finally {
      await receiver.close();
    }
  });

  test("429 with Retry-After delays the next attempt at least that long", async () => {
    const account = ++accountId;
    const receiver = await startReceiver((_request, all) =>
      all.length === 1 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 },
    );
    try {
      const endpoint = await createEndpoint(dispatcher, account, receiver.url);
      await dispatcher.publish(makeEvent({ accountId: account, deliveryId: 8003, sequence: 1 }));
      await waitFor(async () => receiver.received.length >= 2, 10_000, "the retry");
      const [first, second] = receiver.received as [Received, Received];
      assert.ok(second.receivedAt - first.receivedAt >= 1000, "Retry-After: 1 honoured over the 100 ms schedule");
      const attempts = await attemptsOf(endpoint.id, account, 2);
      assert.equal(attempts[0]?.status_code, 429);
    } finally {
      await receiver.close();
    }
  });

  test("events of one delivery arrive in order while another delivery does not wait", async () => {
    const account = ++accountId;
    // Delivery 8101's first event fails twice; 8102 is answered at once.
    const receiver = await startReceiver((request, all) => {
      const tries = all.filter((r) => r.id === request.id).length;
      return { status: request.deliveryId === 8101 && request.sequence === 1 && tries < 3 ? 503 : 200 };
    });
    try {
      await createEndpoint(dispatcher, account, receiver.url);
      const events = [1, 2, 3].map((sequence) => makeEvent({ accountId: account, deliveryId: 8101, sequence }));
      const other = makeEvent({ accountId: account, deliveryId: 8102, sequence: 1 });
      for (const event of [...events, other]) await dispatcher.publish(event);
      await waitFor(async () => receiver.received.filter((r) => r.deliveryId === 8101).length >= 5, 10_000, "all");
      const firstSeen = receiver.received.filter((r) => r.deliveryId === 8101).map((r) => r.sequence);
      assert.deepEqual(firstSeen, [1, 1, 1, 2, 3]);
      const otherAt = receiver.received.findIndex((r) => r.deliveryId === 8102);
      const secondOf8101 = receiver.received.findIndex((r) => r.deliveryId === 8101 && r.sequence === 2);
      assert.ok(otherAt < secondOf8101, "delivery 8102 was not held behind 8101's retries");
    } finally {
      await receiver.close();
    }
  });

  test("a failure inside a run of one delivery's events holds back the rest of the run until it succeeds", async () => {
    const account = ++accountId;
    // The first event is slow, so the other four are queued behind it and go out as one run of
    // the slot that delivered it; the third fails once.
    const receiver = await startReceiver((request, all) => {
      const tries = all.filter((r) => r.id === request.id).length;
      if (request.sequence === 1) return { status: 200, delayMs: 150 };
      return { status: request.sequence === 3 && tries < 2 ? 503 : 200 };
    });
    try {
      await createEndpoint(dispatcher, account, receiver.url);
      for (const sequence of [1, 2, 3, 4, 5]) {
        await dispatcher.publish(makeEvent({ accountId: account, deliveryId: 8151, sequence }));
      }
      await waitFor(async () => receiver.received.length >= 6, 10_000, "five events and one retry");
      assert.deepEqual(
        receiver.received.map((r) => r.sequence),
        [1, 2, 3, 3, 4, 5],
      );
    } finally {
      await receiver.close();
    }
  });

  test("after the last attempt the event is dead-lettered, visible, counted, and the next event goes", async () => {
    const account = ++accountId;
    const receiver = await startReceiver((request) => ({ status: request.sequence === 1 ? 500 : 200 }));
    try {
      const endpoint = await createEndpoint(dispatcher, account, receiver.url);
      const before = await dispatcher.metric("webhook_dead_letters_total", 'reason="attempts"');
      const first = makeEvent({ accountId: account, deliveryId: 8201, sequence: 1 });
      const second = makeEvent({ accountId: account, deliveryId: 8201, sequence: 2 });
      await dispatcher.publish(first);
      await dispatcher.publish(second);
      await waitFor(async () => receiver.received.some((r) => r.sequence === 2), 10_000, "the second event");
      assert.deepEqual(
        receiver.received.map((r) => r.sequence),
        [1, 1, 1, 2],
      );
      const attempts = await attemptsOf(endpoint.id, account, 4);
      assert.deepEqual(
        attempts.map((a) => a.outcome),
        ["retrying", "retrying", "dead_lettered", "delivered"],
      );
      const dead = await dispatcher.db
        .selectFrom("messages")
        .select(["state", "dead_reason", "attempts"])
        .where("event_id", "=", first.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(dead, { state: "dead", dead_reason: "no success after 3 attempts", attempts: 3 });
      assert.equal(await dispatcher.metric("webhook_dead_letters_total", 'reason="attempts"'), before + 1);
    } finally {
      await receiver.close();
    }
  });

  test("410 Gone disables the endpoint; later events are not sent", async () => {
    const account = ++accountId;
    const receiver = await startReceiver(() => ({ status: 410 }));
    try {
      const endpoint = await createEndpoint(dispatcher, account, receiver.url);
      await dispatcher.publish(makeEvent({ accountId: account, deliveryId: 8301, sequence: 1 }));
      const [attempt] = await attemptsOf(endpoint.id, account, 1);
      assert.equal(attempt?.outcome, "dead_lettered");
      const list = await dispatcher.request<Array<{ id: string; status: string; disabled_reason: string | null }>>(
        "list",
        { account_id: account },
      );
      assert.ok(list.ok);
      assert.deepEqual(
        list.value.map((w) => [w.id, w.status, w.disabled_reason]),
        [[endpoint.id, "disabled", "endpoint answered 410 Gone"]],
      );
      await dispatcher.publish(makeEvent({ accountId: account, deliveryId: 8302, sequence: 1 }));
      // A second endpoint of the account proves the later event was processed.
      const witness = await startReceiver();
      try {
        await createEndpoint(dispatcher, account, witness.url);
        const probe = makeEvent({ accountId: account, deliveryId: 8303, sequence: 1 });
        await dispatcher.publish(probe);
        await waitFor(async () => witness.received.some((r) => r.id === probe.id), 10_000, "the witness");
        assert.equal(receiver.received.length, 1);
      } finally {
        await witness.close();
      }
    } finally {
      await receiver.close();
    }
  });

  test("an endpoint failing for longer than the limit is disabled and its pending events dead-lettered", async () => {
    const shortLimit = await startTestDispatcher({
      env: { WEBHOOKS_DISABLE_AFTER_MS: "250", WEBHOOKS_RETRY_SCHEDULE: "0,100,100,100,100,100,100" },
    });
    const receiver = await startReceiver(() => ({ status: 502 }));
    try {
      const endpoint = await createEndpoint(shortLimit, 1, receiver.url);
      await shortLimit.publish(makeEvent({ accountId: 1, deliveryId: 8401, sequence: 1 }));
      await shortLimit.publish(makeEvent({ accountId: 1, deliveryId: 8401, sequence: 2 }));
      const list = await waitFor(async () => {
        const reply = await shortLimit.request<Array<{ status: string; disabled_reason: string }>>("list", {
          account_id: 1,
        });
        return reply.ok && reply.value[0]?.status === "disabled" ? reply.value : undefined;
      });
      assert.match(list[0]?.disabled_reason ?? "", /^no successful attempt for \d+ s$/);
      const states = await shortLimit.db
        .selectFrom("messages")
        .select(["sequence", "state"])
        .where("endpoint_id", "=", endpoint.id)
        .orderBy("sequence")
        .execute();
      assert.deepEqual(states, [
        { sequence: 1, state: "dead" },
        { sequence: 2, state: "dead" },
      ]);
      assert.ok(
        receiver.received.every((r) => r.sequence === 1),
        "the second event was never sent",
      );
    } finally {
      await receiver.close();
      await shortLimit.close();
    }
  });
});
