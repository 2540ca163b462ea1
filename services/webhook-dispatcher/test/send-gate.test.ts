import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createSendGate } from "../src/worker/send-gate.ts";

/** A POST the test finishes by hand. */
function manual() {
  let finish = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { done, finish: () => finish() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** An endpoint of account 1 (the tests of accounts name theirs). */
const endpoint = (name: string) => ({ accountId: 1, endpointId: `endpoint-${name}` });

describe("the send gate", () => {
  test("never more than the endpoint's limit in flight, the rest served first come, first served", async () => {
    const gate = createSendGate({ processLimit: 100, accountLimit: 100, endpointLimit: 2 });
    const started: number[] = [];
    const posts = Array.from({ length: 5 }, () => manual());
    posts.forEach((post, i) => {
      gate.enqueue(endpoint("a"), () => {
        started.push(i);
        return post.done;
      });
    });
    assert.deepEqual(started, [0, 1]);
    posts[1]?.finish();
    await tick();
    assert.deepEqual(started, [0, 1, 2]);
    posts[0]?.finish();
    posts[2]?.finish();
    await tick();
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    assert.equal(gate.inFlight(), 2);
  });

  test("a busy endpoint does not hold back another: endpoints take turns for the process's slots", async () => {
    const gate = createSendGate({ processLimit: 2, accountLimit: 2, endpointLimit: 2 });
    const started: string[] = [];
    const posts: Array<ReturnType<typeof manual>> = [];
    for (const name of ["a1", "a2", "a3", "a4", "b1", "b2"]) {
      const post = manual();
      posts.push(post);
      gate.enqueue(endpoint(name[0] as string), () => {
        started.push(name);
        return post.done;
      });
    }
    assert.deepEqual(started, ["a1", "a2"]);
    posts[0]?.finish();
    await tick();
    // The freed slot goes to b, which waited, before a's third.
    assert.deepEqual(started, ["a1", "a2", "b1"]);
    posts[1]?.finish();
    await tick();
    assert.deepEqual(started, ["a1", "a2", "b1", "a3"]);
  });

  test("a POST that waited past its expiry is handed back, not started; a cancelled one never starts", async () => {
    const gate = createSendGate({ processLimit: 10, accountLimit: 10, endpointLimit: 1 });
    const blocker = manual();
    gate.enqueue(endpoint("a"), () => blocker.done);
    let expiredRan = false;
    let expired = false;
    gate.enqueue(
      endpoint("a"),
      async () => {
        expiredRan = true;
      },
      { expiresAfterMs: 50, onExpired: () => (expired = true) },
    );
    let cancelledRan = false;
    const cancelled = gate.enqueue(endpoint("a"), async () => {
      cancelledRan = true;
    });
    assert.equal(cancelled.cancel(), true);
    let lastRan = false;
    gate.enqueue(endpoint("a"), async () => {
      lastRan = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(expired, true);
    blocker.finish();
    await tick();
    await tick();
    assert.equal(expiredRan, false);
    assert.equal(cancelledRan, false);
    assert.equal(lastRan, true);
    assert.equal(cancelled.cancel(), false, "cancelled once");
  });

  test("an account holds at most its share: another account's POST starts at once, however many endpoints wait", async () => {
    const gate = createSendGate({ processLimit: 6, accountLimit: 4, endpointLimit: 2 });
    const started: string[] = [];
    const posts = new Map<string, ReturnType<typeof manual>>();
    const enqueue = (accountId: number, endpointId: string, name: string) => {
      const post = manual();
      posts.set(name, post);
      gate.enqueue({ accountId, endpointId }, () => {
        started.push(name);
        return post.done;
      });
    };
    // Account 1: five endpoints with three POSTs each, all hanging.
    for (let n = 1; n <= 3; n++) for (let e = 1; e <= 5; e++) enqueue(1, `slow-${e}`, `s${e}.${n}`);
    assert.equal(started.length, 4, "account 1 holds its share, no more");
    assert.deepEqual(started, ["s1.1", "s2.1", "s3.1", "s4.1"], "its endpoints take turns");
    enqueue(2, "fast", "f1");
    enqueue(3, "other", "o1");
    assert.deepEqual(started.slice(4), ["f1", "o1"], "other accounts start at once");
    assert.equal(gate.inFlight(), 6);

    // The process is full: freed slots go to the accounts in turn, not to the one with most waiting.
    enqueue(2, "fast", "f2");
    posts.get("s1.1")?.finish();
    await tick();
    assert.equal(started.at(-1), "f2", "account 2 was next in turn");
    posts.get("f1")?.finish();
    await tick();
    assert.equal(started.at(-1), "s5.1", "then account 1, at its next endpoint");
  });
});
