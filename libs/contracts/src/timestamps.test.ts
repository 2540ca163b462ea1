import assert from "node:assert/strict";
import { test } from "node:test";
import { fleetKey, vehicleIdFromFleetKey } from "./names.ts";
import { formatTimestamp, parseTimestamp } from "./timestamps.ts";

test("a timestamp with offset and milliseconds parses to the right instant", () => {
  assert.equal(parseTimestamp("2026-11-21T10:30:00.000+01:00")?.toISOString(), "2026-11-21T09:30:00.000Z");
  assert.equal(parseTimestamp("2026-11-21T09:30:00Z")?.toISOString(), "2026-11-21T09:30:00.000Z");
});

test("timestamps without an offset, impossible dates and other text are refused", () => {
  for (const text of ["2026-11-21T10:30:00.000", "2026-02-30T10:00:00.000+01:00", "tomorrow", "2026-11-21", ""]) {
    assert.equal(parseTimestamp(text), null, text);
  }
});

test("output is UTC with milliseconds and a numeric offset", () => {
  assert.equal(formatTimestamp(new Date("2026-11-21T09:30:00Z")), "2026-11-21T09:30:00.000+00:00");
});

test("fleet keys keep plain ids and encode the others reversibly", () => {
  assert.equal(fleetKey("VAN-42_a"), "VAN-42_a");
  for (const id of ["van.42", "vélo 7", "a/b>c*"]) {
    const key = fleetKey(id);
    assert.match(key, /^b64\.[A-Za-z0-9_-]+$/);
    assert.equal(vehicleIdFromFleetKey(key), id);
  }
});
