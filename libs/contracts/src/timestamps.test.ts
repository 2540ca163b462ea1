/** The wire timestamp rules: offsets required, real calendar dates only. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTimestamp, parseTimestamp } from "./timestamps.ts";

test("timestamps with an offset parse to the instant they name", () => {
  assert.equal(parseTimestamp("2026-11-21T09:30:00+01:00")?.toISOString(), "2026-11-21T08:30:00.000Z");
  assert.equal(parseTimestamp("2026-11-21T09:30:00.123Z")?.toISOString(), "2026-11-21T09:30:00.123Z");
  assert.equal(parseTimestamp("2028-02-29T23:59:59.5-05:30")?.toISOString(), "2028-03-01T05:29:59.500Z");
  assert.equal(parseTimestamp("2000-02-29T00:00:00Z")?.toISOString(), "2000-02-29T00:00:00.000Z");
});

test("impossible dates and times, and timestamps without an offset, are refused", () => {
  for (const text of [
    // Year 0 is a JavaScript date but not PostgreSQL's (1 BC there): it was a 500 in the day filters.
    "0000-01-01T00:00:00Z",
    "0000-12-31T23:59:59+00:00",
    "2026-02-29T10:00:00Z",
    "2100-02-29T10:00:00Z",
    "2026-02-30T10:00:00+00:00",
    "2026-04-31T10:00:00Z",
    "2026-13-01T10:00:00Z",
    "2026-00-10T10:00:00Z",
    "2026-01-00T10:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T10:60:00Z",
    "2026-01-01T10:00:60Z",
    "2026-01-01T10:00:00",
    "2026-01-01 10:00:00Z",
    "2026-01-01T10:00:00+25:00",
    "yesterday",
  ]) {
    assert.equal(parseTimestamp(text), null, text);
  }
});

test("output is UTC with milliseconds and a numeric offset", () => {
  assert.equal(formatTimestamp(new Date(Date.UTC(2026, 10, 21, 9, 30))), "2026-11-21T09:30:00.000+00:00");
});
