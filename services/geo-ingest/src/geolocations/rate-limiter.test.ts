/** The per-vehicle schedule: one request per interval, with half of it for jitter. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createRateLimiter } from "./rate-limiter.ts";

const allowedAt = (times: number[], intervalMs = 1000) => {
  const limiter = createRateLimiter(intervalMs);
  return times.filter((now) => limiter.take("VAN", now).allowed);
};

test("a tracker sending once a second with jitter is always allowed", () => {
  // Sent every 1000 ms, each arriving 0-450 ms late: consecutive arrivals 550-1450 ms apart.
  const arrivals = [0, 1450, 2000, 3150, 4440, 5000, 6000];
  assert.deepEqual(allowedAt(arrivals), arrivals);
});

test("a faster tracker gets no more than one request per interval over time", () => {
  // Every 800 ms for 40 s: 51 requests, of which at most one per second (plus the first) pass.
  const arrivals = Array.from({ length: 51 }, (_, i) => i * 800);
  const allowed = allowedAt(arrivals);
  assert.ok(allowed.length <= 1 + Math.floor((40_000 + 500) / 1000), `${allowed.length} allowed`);
  assert.ok(allowed.length >= 30, `${allowed.length} allowed`);
});

test("a burst is allowed once; the refusal says how long to wait", () => {
  const limiter = createRateLimiter(1000);
  assert.equal(limiter.take("VAN", 0).allowed, true);
  assert.deepEqual(limiter.take("VAN", 100), { allowed: false, retryAfterMs: 400 });
  // Another vehicle has its own schedule.
  assert.equal(limiter.take("TRUCK", 100).allowed, true);
  assert.equal(limiter.take("VAN", 500).allowed, true);
});

test("a refunded slot is as if the request never came", () => {
  const limiter = createRateLimiter(1000);
  const first = limiter.take("VAN", 0);
  assert.ok(first.allowed);
  const second = limiter.take("VAN", 1000);
  assert.ok(second.allowed);
  limiter.refund("VAN", second);
  // The schedule is back to the first request's: due at 1000, so 1001 is allowed.
  assert.equal(limiter.take("VAN", 1001).allowed, true);
  assert.equal(limiter.take("VAN", 1002).allowed, false);
});

test("a vehicle silent for two intervals is forgotten and starts afresh", () => {
  const limiter = createRateLimiter(1000);
  assert.equal(limiter.take("VAN", 0).allowed, true);
  for (let now = 1000; now <= 3000; now += 1000) limiter.take(`OTHER-${now}`, now);
  assert.equal(limiter.size, 2);
  assert.equal(limiter.take("VAN", 3000).allowed, true);
});
