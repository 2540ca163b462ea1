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

test("the canonical form (toISOString's) parses to what the general path gives the same instant with +00:00", () => {
  // The canonical text is read field by field; the same text with "+00:00" in place of "Z" goes
  // through the pattern and Date.parse. Every month, days 0-32, hours, minutes and seconds at
  // and beyond their bounds, leap and common years, centuries.
  let compared = 0;
  for (const year of ["1000", "1900", "1999", "2000", "2024", "2026", "2100", "9999"]) {
    for (let month = 0; month <= 13; month++) {
      for (let day = 0; day <= 32; day++) {
        for (const time of [
          "00:00:00.000",
          "23:59:59.999",
          "24:00:00.000",
          "12:60:00.000",
          "12:00:60.000",
          "09:30:15.123",
        ]) {
          const date = `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}T${time}`;
          const canonical = parseTimestamp(`${date}Z`);
          const general = parseTimestamp(`${date}+00:00`);
          assert.equal(canonical?.getTime(), general?.getTime(), date);
          compared++;
        }
      }
    }
  }
  assert.equal(compared, 8 * 14 * 33 * 6);
});

test("texts near the canonical form but not in it are judged by the general path", () => {
  assert.equal(parseTimestamp("2026-01-01T10:00:00.1234Z")?.toISOString(), "2026-01-01T10:00:00.123Z");
  assert.equal(parseTimestamp("0999-01-01T10:00:00.000Z")?.toISOString(), "0999-01-01T10:00:00.000Z");
  assert.equal(parseTimestamp("0050-01-01T00:00:00.000Z")?.toISOString(), "0050-01-01T00:00:00.000Z");
  assert.equal(parseTimestamp("2026-1-01T10:00:00.000Z"), null);
  assert.equal(parseTimestamp("2026-01-01T10:00:00.00Z "), null);
  assert.equal(parseTimestamp("2026-01-01T10:00:00.000z"), null);
});
