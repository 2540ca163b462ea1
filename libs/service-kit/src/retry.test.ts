import assert from "node:assert/strict";
import { test } from "node:test";
import { retry, sleep } from "./retry.ts";

test("retry runs the work again with doubling pauses up to maxMs, until it succeeds", async () => {
  const pauses: number[] = [];
  const result = await retry(
    async (attempt) => {
      if (attempt < 5) throw new Error(`attempt ${attempt}`);
      return attempt;
    },
    { backoff: { firstMs: 5, maxMs: 30 }, onRetry: (_error, _attempt, pauseMs) => pauses.push(pauseMs) },
  );
  assert.equal(result, 5);
  assert.deepEqual(pauses, [5, 10, 20, 30]);
});

test("without maxMs every pause is firstMs", async () => {
  const pauses: number[] = [];
  await retry(
    async (attempt) => {
      if (attempt < 3) throw new Error("no");
    },
    { backoff: { firstMs: 5 }, onRetry: (_error, _attempt, pauseMs) => pauses.push(pauseMs) },
  );
  assert.deepEqual(pauses, [5, 5]);
});

test("an abort ends the pause under way and throws the last error", async () => {
  const stop = new AbortController();
  const started = performance.now();
  const running = retry(
    async (attempt) => {
      throw new Error(`failure ${attempt}`);
    },
    { backoff: { firstMs: 60_000 }, signal: stop.signal },
  );
  setTimeout(() => stop.abort(), 20);
  await assert.rejects(running, /failure 1/);
  assert.ok(performance.now() - started < 1000);
});

test("sleep resolves at once when its signal aborts", async () => {
  const stop = new AbortController();
  const started = performance.now();
  setTimeout(() => stop.abort(), 10);
  await sleep(60_000, stop.signal);
  assert.ok(performance.now() - started < 1000);
});
