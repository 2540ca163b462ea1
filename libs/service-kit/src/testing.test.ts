import assert from "node:assert/strict";
import { test } from "node:test";
import { natsNames } from "@dos/contracts";
import { isStaleTestStream, randomNamespace } from "./testing.ts";

test("the sweep of old test namespaces takes their streams and KV buckets, never production's or a recent run's", () => {
  const now = Date.parse("2026-11-22T12:00:00Z");
  const cutoff = now - 60 * 60 * 1000;
  const old = "2026-11-22T10:00:00.000Z";
  const recent = "2026-11-22T11:30:00.000Z";
  const test = natsNames(randomNamespace());
  const production = natsNames();

  assert.equal(isStaleTestStream(test.streams.deliveryEvents, old, cutoff), true);
  assert.equal(isStaleTestStream(`KV_${test.buckets.fleet}`, old, cutoff), true);
  assert.equal(isStaleTestStream(test.streams.deliveryEvents, recent, cutoff), false, "a run still going");
  assert.equal(isStaleTestStream(production.streams.deliveryEvents, old, cutoff), false);
  assert.equal(isStaleTestStream(`KV_${production.buckets.fleet}`, old, cutoff), false);
  assert.equal(isStaleTestStream(natsNames("staging").streams.deliveryEvents, old, cutoff), false);
});
