import assert from "node:assert/strict";
import { test } from "node:test";
import { computedSlot } from "./slots.ts";

const at = (text: string) => new Date(text);
const now = at("2030-01-01T08:00:00Z");
const anchor = { start: at("2030-01-01T14:00:00Z"), end: at("2030-01-01T16:00:00Z") };
const settings = { gapMinutes: 30, durationMinutes: 90 };

test("a pickup at the default place ends gap minutes before the dropoff and lasts the duration", () => {
  assert.deepEqual(computedSlot("pickup", anchor, settings, now), {
    start: at("2030-01-01T12:00:00Z"),
    end: at("2030-01-01T13:30:00Z"),
  });
});

test("a dropoff at the default place starts gap minutes after the pickup ends", () => {
  assert.deepEqual(computedSlot("dropoff", anchor, settings, now), {
    start: at("2030-01-01T16:30:00Z"),
    end: at("2030-01-01T18:00:00Z"),
  });
});

test("a pickup is clamped to start now, and impossible when it would have to end before now", () => {
  assert.deepEqual(computedSlot("pickup", anchor, settings, at("2030-01-01T13:00:00Z")), {
    start: at("2030-01-01T13:00:00Z"),
    end: at("2030-01-01T13:30:00Z"),
  });
  assert.equal(computedSlot("pickup", anchor, settings, at("2030-01-01T13:45:00Z")), null);
});
