import assert from "node:assert/strict";
import { test } from "node:test";
import { applyRequests, intervalOf, refusal, rescale } from "./gcra.ts";

const policy = { quota: 10, windowSeconds: 2 }; // 10 at once, then one every 200 ms

test("a full bucket lets the quota through at once, then refuses", () => {
  const { decisions, tat } = applyRequests(0, 1_000_000, policy, 12);
  assert.deepEqual(
    decisions.map((d) => d.allowed),
    [...Array(10).fill(true), false, false],
  );
  assert.deepEqual(
    decisions.slice(0, 10).map((d) => d.remaining),
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
  );
  assert.equal(tat, 1_000_000 + 2000);
  assert.equal(decisions[10]?.retryAfterMs, 200);
  assert.equal(decisions[10]?.resetMs, 2000);
});

test("the bucket refills one request per interval, and a refusal does not consume", () => {
  const now = 1_000_000;
  const { tat } = applyRequests(0, now, policy, 10);
  assert.ok(refusal(tat, now + 199, policy), "199 ms later: still empty");
  assert.equal(refusal(tat, now + 200, policy), null, "200 ms later: one request");
  const later = applyRequests(tat, now + 1000, policy, 6);
  assert.deepEqual(
    later.decisions.map((d) => d.allowed),
    [true, true, true, true, true, false],
  );
});

test("an idle account starts full: a TAT in the past counts as now", () => {
  const { decisions } = applyRequests(5, 10_000_000, policy, 1);
  assert.equal(decisions[0]?.remaining, 9);
  assert.equal(decisions[0]?.resetMs, 200);
});

test("a TAT written under another policy keeps the requests it stands for, within a full bucket", () => {
  const now = 1_000_000;
  // 1 request used under 10 per hour (one per 360 s): the TAT is 360 s ahead.
  const hourly = { quota: 10, windowSeconds: 3600 };
  const { tat } = applyRequests(0, now, hourly, 1);
  const raised = { quota: 600, windowSeconds: 60 };
  const read = rescale(tat, intervalOf(hourly), now, raised);
  assert.equal(read, now + 100, "one request of 100 ms");
  assert.equal(applyRequests(read, now, raised, 1).decisions[0]?.remaining, 598);
  // 10 used under 600 per minute, read under 5 per minute: a full bucket, not 10 buckets.
  const busy = applyRequests(0, now, raised, 10).tat;
  assert.equal(rescale(busy, intervalOf(raised), now, { quota: 5, windowSeconds: 60 }), now + 60_000);
  assert.equal(rescale(now - 5, 1, now, raised), now - 5, "a TAT in the past stays as it is");
});
