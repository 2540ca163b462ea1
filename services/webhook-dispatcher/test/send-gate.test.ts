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

describe("the send gate", () => {
  test("never more than the endpoint's limit in flight, the rest served first come, first served", async () => {
    const gate = createSendGate({ processLimit: 100, endpointLimit: 2 });
    const started: number[] = [];
    const posts = Array.from({ length: 5 }, () => manual());
    posts.forEach((post, i) => {
      gate.enqueue("endpoint-a", () => {
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
    const gate = createSendGate({ processLimit: 2, endpointLimit: 2 });
    const started: string[] = [];
    const posts: Array<ReturnType<typeof manual>> = [];
    for (const name of ["a1", "a2", "a3", "a4", "b1", "b2"]) {
      const post = manual();
      posts.push(post);
      gate.enqueue(`endpoint-${name[0]}`, () => {
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
    const gate = createSendGate({ processLimit: 10, endpointLimit: 1 });
    const blocker = manual();
    gate.enqueue("endpoint-a", () => blocker.done);
    let expiredRan = false;
    let expired = false;
    gate.enqueue(
      "endpoint-a",
      async () => {
        expiredRan = true;
      },
      { expiresAfterMs: 50, onExpired: () => (expired = true) },
    );
    let cancelledRan = false;
    const cancelled = gate.enqueue("endpoint-a", async () => {
      cancelledRan = true;
    });
    assert.equal(cancelled.cancel(), true);
    let lastRan = false;
    gate.enqueue("endpoint-a", async () => {
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
});
