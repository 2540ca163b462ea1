import assert from "node:assert/strict";
import { test } from "node:test";
import { applyRequests, refusal } from "./gcra.ts";

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
