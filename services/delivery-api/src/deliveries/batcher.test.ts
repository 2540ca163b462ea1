import assert from "node:assert/strict";
import { test } from "node:test";
import { createBatcher } from "./batcher.ts";

test("concurrent calls share a batch and each gets its own result", async () => {
  const batches: number[][] = [];
  const batcher = createBatcher(
    async (items: number[]) => {
      batches.push(items);
      return items.map((n) => n * 10);
    },
    { maxBatch: 50, concurrency: 1 },
  );
  const results = await Promise.all(Array.from({ length: 120 }, (_, n) => batcher.run(n)));
  assert.deepEqual(
    results,
    Array.from({ length: 120 }, (_, n) => n * 10),
  );
  assert.deepEqual(
    batches.map((b) => b.length),
    [50, 50, 20],
  );
});

test("a lone call runs at once, in a batch of its own", async () => {
  const batcher = createBatcher(async (items: string[]) => items.map((s) => s.toUpperCase()), {
    maxBatch: 10,
    concurrency: 2,
  });
  assert.equal(await batcher.run("a"), "A");
  assert.equal(await batcher.run("b"), "B");
});

test("when a batch fails, its items run alone: only the bad one fails", async () => {
  const batches: number[][] = [];
  const batcher = createBatcher(
    async (items: number[]) => {
      batches.push(items);
      if (items.includes(13)) throw new Error("13 refused");
      return items;
    },
    { maxBatch: 100, concurrency: 1 },
  );
  const outcomes = await Promise.allSettled([11, 12, 13, 14].map((n) => batcher.run(n)));
  assert.deepEqual(
    outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message)),
    [11, 12, "13 refused", 14],
  );
  assert.deepEqual(batches, [[11, 12, 13, 14], [11], [12], [13], [14]]);
});
