import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseRetrySchedule } from "../src/config.ts";
import type { PostResult } from "../src/delivery-http/webhook-client.ts";
import { parseRetryAfter } from "../src/delivery-http/webhook-client.ts";
import { decideAfterAttempt } from "../src/worker/retry-policy.ts";

const policy = {
  scheduleMs: parseRetrySchedule("0,5s,5m,30m,2h,5h,10h,10h"),
  jitter: 0.2,
  retryAfterMaxMs: 86_400_000,
};
const answered = (statusCode: number | null, retryAfterMs: number | null = null): PostResult => ({
  statusCode,
  durationMs: 5,
  error: statusCode === 200 ? null : "failed",
  retryAfterMs,
});

describe("retry policy", () => {
  test("the default schedule is Svix's", () => {
    assert.deepEqual(policy.scheduleMs, [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
  });

  test("2xx is delivered; a failure waits the next delay of the schedule, spread by the jitter", () => {
    assert.deepEqual(decideAfterAttempt(policy, 1, answered(200)), { outcome: "delivered" });
    assert.deepEqual(
      decideAfterAttempt(policy, 1, answered(500), () => 0.5),
      { outcome: "retrying", delayMs: 5_000 },
    );
    assert.deepEqual(
      decideAfterAttempt(policy, 2, answered(null), () => 0),
      { outcome: "retrying", delayMs: 240_000 },
    );
    assert.deepEqual(
      decideAfterAttempt(policy, 2, answered(302), () => 1),
      { outcome: "retrying", delayMs: 360_000 },
    );
  });

  test("after the last attempt the event is dead-lettered", () => {
    assert.deepEqual(decideAfterAttempt(policy, 8, answered(500)), {
      outcome: "dead_lettered",
      reason: "no success after 8 attempts",
    });
  });

  test("410 dead-letters at once and disables the endpoint", () => {
    assert.deepEqual(decideAfterAttempt(policy, 1, answered(410)), {
      outcome: "dead_lettered",
      reason: "endpoint answered 410 Gone",
      disableEndpoint: "endpoint answered 410 Gone",
    });
  });

  test("Retry-After of a 429 or 503 is honoured when longer, up to the cap; other statuses ignore it", () => {
    const capped = { ...policy, retryAfterMaxMs: 60_000 };
    assert.deepEqual(
      decideAfterAttempt(policy, 1, answered(429, 30_000), () => 0.5),
      { outcome: "retrying", delayMs: 30_000 },
    );
    assert.deepEqual(
      decideAfterAttempt(policy, 1, answered(503, 1_000), () => 0.5),
      { outcome: "retrying", delayMs: 5_000 },
    );
    assert.deepEqual(
      decideAfterAttempt(capped, 1, answered(429, 600_000), () => 0.5),
      { outcome: "retrying", delayMs: 60_000 },
    );
    assert.deepEqual(
      decideAfterAttempt(policy, 1, answered(500, 30_000), () => 0.5),
      { outcome: "retrying", delayMs: 5_000 },
    );
  });

  test("Retry-After is read as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    assert.equal(parseRetryAfter("120", now), 120_000);
    assert.equal(parseRetryAfter("Sat, 21 Nov 2026 10:01:00 GMT", now), 60_000);
    assert.equal(parseRetryAfter("soon", now), null);
    assert.equal(parseRetryAfter(undefined, now), null);
  });
});
