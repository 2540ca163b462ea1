import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { deliveryEventPartition } from "@dos/contracts";
import { ConfigError } from "@dos/service-kit";
import { waitFor } from "@dos/service-kit/testing";
import { loadDispatcherConfig } from "../src/config.ts";
import { createEndpoint, startTestDispatcher, TEST_ENV, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

// The attacker and one well-behaved account share a partition (one consumer, one replica's
// memory and retry worker); another well-behaved account is in another partition of the replica.
const ATTACKER = 301;
const SAME_PARTITION = 317;
const OTHER_PARTITION = 302;
const HANGING_ENDPOINTS = 18;

// Small limits, so that the attacker's endpoints could fill the whole process many times over.
const PROCESS_LIMIT = 8;
const ACCOUNT_LIMIT = 4;
const TIMEOUT_MS = 5000;
const RETRY_DELAY_MS = 100;
/**
 * The README's bound: with fewer than PROCESS_LIMIT / ACCOUNT_LIMIT accounts filling their share
 * (here one), a well-behaved account's first attempt waits for no slot, only for its event's
 * intake, as without the attack: it may take at most twice as long as the slowest probe measured
 * without the attack (or 1.5 s, whichever is more: the shared machine's load varies), and always
 * less than half a timeout, as without fairness it waited for a hanging POST's timeout
 * (TIMEOUT_MS) or longer.
 */
const FIRST_ATTEMPT_BOUND_MS = 1500;
/**
 * A well-behaved account's retry (its first attempt failed) is due RETRY_DELAY_MS after the
 * failure is recorded; the attacker's piles of webhooks moving to the database queue and its
 * failures being recorded delay that record by at most the batch in progress, and the claim by
 * at most a poll. The same allowance for load, below a timeout.
 */
const RETRY_BOUND_MS = 2500;

/** The bound for a kind of probe: the stated one, or twice the slowest without the attack, below `cap`. */
const boundOf = (stated: number, quiet: number[], cap: number) =>
  Math.min(cap, Math.max(stated, 2 * Math.max(...quiet)));

describe("fair webhooks between accounts", () => {
  let dispatcher: TestDispatcher;
  let hanging: Receiver[];
  let failing: Receiver;
  let samePartition: Receiver;
  let otherPartition: Receiver;

  before(async () => {
    assert.equal(deliveryEventPartition(ATTACKER), deliveryEventPartition(SAME_PARTITION));
    assert.notEqual(deliveryEventPartition(ATTACKER), deliveryEventPartition(OTHER_PARTITION));
    dispatcher = await startTestDispatcher({
      env: {
        WEBHOOKS_CONCURRENCY: String(PROCESS_LIMIT),
        WEBHOOKS_ACCOUNT_CONCURRENCY: String(ACCOUNT_LIMIT),
        WEBHOOKS_ENDPOINT_CONCURRENCY: "2",
        WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOKS_MEMORY_WAIT_MS: "1000",
        // The attacker's failures come back for retries all through the test.
        WEBHOOKS_RETRY_SCHEDULE: Array.from({ length: 8 }, (_, i) => (i === 0 ? 0 : RETRY_DELAY_MS)).join(","),
      },
    });
    hanging = await Promise.all(
      Array.from({ length: HANGING_ENDPOINTS }, () => startReceiver(() => ({ status: 200, delayMs: 30_000 }))),
    );
    failing = await startReceiver(() => ({ status: 500 }));
    samePartition = await startReceiver();
    // Fails each event's first attempt: its second comes from the database queue, beside the attacker's retries.
    otherPartition = await startReceiver((request, received) => ({
      status: received.filter((r) => r.id === request.id).length === 1 ? 500 : 204,
    }));
    await createEndpoint(dispatcher, ATTACKER, failing.url);
    for (const receiver of hanging) await createEndpoint(dispatcher, ATTACKER, receiver.url, ["delivery.created"]);
    await createEndpoint(dispatcher, SAME_PARTITION, samePartition.url);
    await createEndpoint(dispatcher, OTHER_PARTITION, otherPartition.url);
  });
  after(async () => {
    await dispatcher.close();
    for (const receiver of [...hanging, failing, samePartition, otherPartition]) await receiver.close();
  });

  /** Publishes a delivery.created of each well-behaved account every 250 ms; answers their publish times by account. */
  async function probe(count: number, firstDelivery: number) {
    const sent = new Map<number, Map<string, number>>([
      [SAME_PARTITION, new Map()],
      [OTHER_PARTITION, new Map()],
    ]);
    for (let i = 0; i < count; i++) {
      for (const [account, times] of sent) {
        const event = makeEvent({ accountId: account, deliveryId: account * 1000 + firstDelivery + i, sequence: 1 });
        times.set(event.id, Date.now());
        await dispatcher.publish(event);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Waits for them all, but not forever: a probe still missing then counts as never arrived.
    const arrived = () =>
      [...(sent.get(SAME_PARTITION) as Map<string, number>).keys()].every((id) => attempts(samePartition, id) >= 1) &&
      [...(sent.get(OTHER_PARTITION) as Map<string, number>).keys()].every((id) => attempts(otherPartition, id) >= 2);
    await waitFor(async () => arrived(), 2 * TIMEOUT_MS, "the probes").catch(() => {});
    return {
      samePartition: delays(sent.get(SAME_PARTITION) as Map<string, number>, samePartition, 1),
      otherPartition: delays(sent.get(OTHER_PARTITION) as Map<string, number>, otherPartition, 1),
      retries: delays(sent.get(OTHER_PARTITION) as Map<string, number>, otherPartition, 2),
    };
  }

  const attempts = (receiver: Receiver, id: string) => receiver.received.filter((r) => r.id === id).length;

  /** Each probe's delay from its publish to its nth attempt; Infinity when that attempt never came. */
  function delays(sent: Map<string, number>, receiver: Receiver, attempt: number): number[] {
    return [...sent].map(([id, publishedAt]) => {
      const arrival = receiver.received.filter((r) => r.id === id)[attempt - 1];
      return arrival ? arrival.receivedAt - publishedAt : Number.POSITIVE_INFINITY;
    });
  }

  test("an account whose endpoints hang or fail does not hold another account's first attempts back", async (t) => {
    const quiet = await probe(4, 0);
    t.diagnostic(`without the attack: ${JSON.stringify(quiet)}`);

    // Updates go to the failing endpoint only: it fails first, then its retries come back all along.
    for (let delivery = 1; delivery <= 8; delivery++) {
      await dispatcher.publish(makeEvent({ accountId: ATTACKER, deliveryId: 30_000 + delivery, sequence: 2 }));
    }
    await waitFor(async () => failing.received.length >= 8, 5000, "the failing endpoint tried");
    for (let delivery = 1; delivery <= 40; delivery++) {
      await dispatcher.publish(makeEvent({ accountId: ATTACKER, deliveryId: 30_100 + delivery, sequence: 1 }));
    }
    const attackerInFlight = () => hanging.reduce((sum, receiver) => sum + receiver.inFlight, 0);
    await waitFor(async () => attackerInFlight() >= ACCOUNT_LIMIT, 5000, "the attacker's POSTs hanging");
    let attackerMost = 0;
    const watch = setInterval(() => {
      attackerMost = Math.max(attackerMost, attackerInFlight());
    }, 20);
    // Through the attack: its POSTs time out, its webhooks move to the database queue and come
    // back as retries meanwhile.
    const attacked = await probe(16, 100).finally(() => clearInterval(watch));
    t.diagnostic(`under the attack: ${JSON.stringify(attacked)}`);

    const max = (values: number[]) => Math.max(...values);
    const quietFirst = [...quiet.samePartition, ...quiet.otherPartition];
    const firstBound = boundOf(FIRST_ATTEMPT_BOUND_MS, quietFirst, TIMEOUT_MS / 2);
    const retryBound = boundOf(RETRY_BOUND_MS, quiet.retries, TIMEOUT_MS);
    t.diagnostic(`bounds: first attempts ${firstBound} ms, retries ${retryBound} ms`);
    assert.ok(max(attacked.samePartition) <= firstBound, `same partition: ${attacked.samePartition}`);
    assert.ok(max(attacked.otherPartition) <= firstBound, `other partition: ${attacked.otherPartition}`);
    assert.ok(max(attacked.retries) <= retryBound, `retries: ${attacked.retries}`);
    assert.ok(attackerMost <= ACCOUNT_LIMIT, `the attacker held ${attackerMost} POSTs at once`);
    assert.ok(failing.received.length > 0, "the failing endpoint was tried meanwhile");
  });

  test("an account's share that leaves no room for the others stops the boot", () => {
    const env = {
      ...TEST_ENV,
      DATABASE_URL: "postgres://localhost/x",
      NATS_URL: "nats://localhost:4222",
      NATS_NAMESPACE: "x",
    };
    assert.throws(
      () => loadDispatcherConfig({ ...env, WEBHOOKS_CONCURRENCY: "16", WEBHOOKS_ACCOUNT_CONCURRENCY: "16" }),
      (error: Error) =>
        error instanceof ConfigError &&
        /^WEBHOOKS_ACCOUNT_CONCURRENCY is invalid: must be less than/.test(error.message),
    );
    assert.equal(loadDispatcherConfig(env).WEBHOOKS_ACCOUNT_CONCURRENCY, 16);
  });
});
