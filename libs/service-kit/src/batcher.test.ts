import assert from "node:assert/strict";
import { test } from "node:test";
import { createBatcher, createGathering, ItemRefused } from "./batcher.ts";

const outcomes = (settled: PromiseSettledResult<unknown>[]) =>
  settled.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message));

test("concurrent items share a batch and each gets its own result", async () => {
  const batches: number[][] = [];
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      batches.push(items);
      return items.map((n) => n * 10);
    },
    maxBatch: 50,
    onFailure: { policy: "reject" },
  });
  const results = await Promise.all(Array.from({ length: 120 }, (_, n) => batcher.add(n)));
  assert.deepEqual(
    results,
    Array.from({ length: 120 }, (_, n) => n * 10),
  );
  assert.deepEqual(
    batches.map((b) => b.length),
    [50, 50, 20],
  );
});

test("a lone item goes at once, in a batch of its own", async () => {
  const batcher = createBatcher({
    handle: async (items: string[]) => items.map((s) => s.toUpperCase()),
    maxBatch: 10,
    concurrency: 2,
    onFailure: { policy: "reject" },
  });
  assert.equal(await batcher.add("a"), "A");
  assert.equal(await batcher.add("b"), "B");
});

test("items wait lingerMs for company, unless the batch is full", async () => {
  const batches: number[][] = [];
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      batches.push(items);
      return items;
    },
    maxBatch: 3,
    lingerMs: 50,
    onFailure: { policy: "reject" },
  });
  const first = batcher.add(1);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const second = batcher.add(2);
  await Promise.all([first, second]);
  assert.deepEqual(batches, [[1, 2]]);
  await Promise.all([batcher.add(3), batcher.add(4), batcher.add(5)]);
  assert.deepEqual(batches, [
    [1, 2],
    [3, 4, 5],
  ]);
});

test("concurrency bounds the batches in flight; items gather meanwhile", async () => {
  // The handler holds its batch until the test lets go, so what is measured is the batcher's
  // bookkeeping, not how timers race on a loaded machine.
  let running = 0;
  let most = 0;
  const sizes: number[] = [];
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      running++;
      most = Math.max(most, running);
      sizes.push(items.length);
      await released;
      running--;
      return items;
    },
    maxBatch: 1000,
    concurrency: 2,
    onFailure: { policy: "reject" },
  });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const calls: Array<Promise<number>> = [];
  for (let round = 0; round < 5; round++) {
    for (let n = 0; n < 10; n++) calls.push(batcher.add(n));
    await turn();
  }
  assert.deepEqual(sizes, [10, 10], "two batches in flight, the other 30 items wait");
  release();
  assert.deepEqual(
    await Promise.all(calls),
    Array.from({ length: 5 }, () => Array.from({ length: 10 }, (_, n) => n)).flat(),
  );
  assert.equal(most, 2);
  assert.deepEqual(sizes, [10, 10, 30], "the items that waited go together");
});

test("reject: every item of a failed batch is rejected and onRejected is told once", async () => {
  const told: number[] = [];
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      if (items.includes(2)) throw new Error("database away");
      return items;
    },
    maxBatch: 10,
    onFailure: { policy: "reject" },
    onRejected: (_error, items) => told.push(items),
  });
  const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
  assert.deepEqual(outcomes(settled), ["database away", "database away", "database away"]);
  assert.deepEqual(told, [3]);
});

test("isolate: a failed batch is halved until only the bad item fails", async () => {
  const batches: number[][] = [];
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      batches.push(items);
      if (items.includes(13)) throw new Error("13 refused");
      return items;
    },
    maxBatch: 100,
    onFailure: { policy: "isolate" },
  });
  const settled = await Promise.allSettled([11, 12, 13, 14].map((n) => batcher.add(n)));
  assert.deepEqual(outcomes(settled), [11, 12, "13 refused", 14]);
  assert.deepEqual(batches, [[11, 12, 13, 14], [11, 12], [13, 14], [13], [14]]);
});

test("isolate with `when`: an error no item can cause rejects the batch as it is", async () => {
  let calls = 0;
  const batcher = createBatcher({
    handle: async (_items: number[]): Promise<number[]> => {
      calls++;
      throw Object.assign(new Error("connection lost"), { code: "ECONNRESET" });
    },
    maxBatch: 10,
    onFailure: { policy: "isolate", when: (error) => (error as { code?: string }).code === "23505" },
  });
  const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
  assert.deepEqual(outcomes(settled), ["connection lost", "connection lost", "connection lost"]);
  assert.equal(calls, 1);
});

test("ItemRefused rejects its own item and answers the rest", async () => {
  const batcher = createBatcher({
    handle: async (items: number[]) => items.map((n) => (n % 2 ? n : new ItemRefused(new Error(`${n} is even`)))),
    maxBatch: 10,
    onFailure: { policy: "reject" },
  });
  const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
  assert.deepEqual(outcomes(settled), [1, "2 is even", 3]);
});

test("retry: a failing batch is handled again with a growing pause until it succeeds", async () => {
  const attempts: number[] = [];
  const pauses: number[] = [];
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      attempts.push(performance.now());
      if (attempts.length < 4) throw new Error("database away");
      return items;
    },
    maxBatch: 10,
    onFailure: {
      policy: "retry",
      backoff: { firstMs: 10, maxMs: 25 },
      onRetry: (_e, _n, pauseMs) => pauses.push(pauseMs),
    },
  });
  assert.deepEqual(await Promise.all([batcher.add(1), batcher.add(2)]), [1, 2]);
  assert.deepEqual(pauses, [10, 20, 25]);
});

test("retry: stop rejects the failing batch and what waits behind it", async () => {
  let tried = 0;
  const batcher = createBatcher({
    handle: async (_items: number[]): Promise<number[]> => {
      tried++;
      throw new Error("database away");
    },
    maxBatch: 1,
    onFailure: { policy: "retry", backoff: { firstMs: 60_000 } },
  });
  const settled = Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
  while (tried === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const stoppedAt = performance.now();
  batcher.stop();
  assert.deepEqual(outcomes(await settled), ["database away", "database away", "database away"]);
  assert.ok(performance.now() - stoppedAt < 1000, "stop ends the pause at once");
  assert.equal(tried, 1);
});

test("owners take turns for a batch's room", async () => {
  const batches: string[][] = [];
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const batcher = createBatcher({
    handle: async (items: string[]) => {
      batches.push(items);
      await gate;
      return items;
    },
    maxBatch: 4,
    ownerOf: (item) => (item.startsWith("a") ? 1 : 2),
    onFailure: { policy: "reject" },
  });
  const first = batcher.add("a0");
  while (batches.length === 0) await new Promise((resolve) => setImmediate(resolve));
  // Gathered while the first batch is in flight: account 1's pile does not hold account 2 back.
  const rest = ["a1", "a2", "a3", "a4", "a5", "b1", "b2"].map((item) => batcher.add(item));
  open();
  await Promise.all([first, ...rest]);
  assert.deepEqual(batches, [["a0"], ["a1", "a2", "b1", "b2"], ["a3", "a4", "a5"]]);
});

test("order sorts each batch, and results still reach their own callers", async () => {
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      assert.deepEqual(
        items,
        [...items].sort((a, b) => a - b),
      );
      return items.map((n) => n * 2);
    },
    maxBatch: 10,
    order: (a, b) => a - b,
    onFailure: { policy: "reject" },
  });
  assert.deepEqual(await Promise.all([3, 1, 2].map((n) => batcher.add(n))), [6, 2, 4]);
});

test("drain sends a lingering batch at once and resolves when all is settled", async () => {
  const batcher = createBatcher({
    handle: async (items: number[]) => items,
    maxBatch: 10,
    lingerMs: 60_000,
    onFailure: { policy: "reject" },
  });
  const result = batcher.add(7);
  assert.equal(batcher.queued, 1);
  await batcher.drain();
  assert.equal(await result, 7);
  assert.equal(batcher.queued, 0);
});

test("quietMs: after a quiet spell an item goes at once; one following a recent batch lingers", async () => {
  const batches: number[][] = [];
  const batcher = createBatcher({
    handle: async (items: number[]) => {
      batches.push(items);
      return items;
    },
    maxBatch: 10,
    lingerMs: 60_000,
    quietMs: 600_000,
    onFailure: { policy: "reject" },
  });
  // No batch was ever taken: quiet. Would it linger, this await would outlast the test.
  assert.equal(await batcher.add(1), 1);
  // A batch was just taken: the next item waits for company.
  const second = batcher.add(2);
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(batches, [[1]], "the second item lingers");
  const third = batcher.add(3);
  await batcher.drain();
  assert.deepEqual(await Promise.all([second, third]), [2, 3]);
  assert.deepEqual(batches, [[1], [2, 3]]);
});

/** Lets the event loop turn a few times, so anything due to go on has gone on. */
async function turns(count = 5) {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}

test("gathering: a caller after a quiet spell goes at once; callers close behind go together once enough came", async () => {
  const gathering = createGathering({ withinMs: 60_000, enough: 3 });
  // Nobody went on before: a lone caller waits for nobody (waiting, it would outlast the test).
  await gathering.join();
  const went: number[] = [];
  const joined = [1, 2].map((n) => gathering.join().then(() => went.push(n)));
  await turns();
  assert.equal(went.length, 0, "two callers wait for company");
  joined.push(gathering.join().then(() => went.push(3)));
  await Promise.all(joined);
  assert.deepEqual(went, [1, 2, 3], "the third makes enough: all three go on, in the order they came");
});

test("gathering: callers close behind a group wait at most withinMs", async () => {
  const gathering = createGathering({ withinMs: 30, enough: 100 });
  await gathering.join();
  const started = performance.now();
  await gathering.join();
  const waited = performance.now() - started;
  assert.ok(waited >= 25, `waited ${waited.toFixed(1)} ms for company`);
});

test("gathering: withinMs 0 never waits", async () => {
  const gathering = createGathering({ withinMs: 0, enough: 8 });
  await gathering.join();
  let went = false;
  const second = gathering.join().then(() => {
    went = true;
  });
  await turns(1);
  assert.ok(went);
  await second;
});
