/**
 * Timestamps on the wire: ISO 8601 with an explicit UTC offset. Input may omit the fractional
 * seconds; output always carries milliseconds and an offset (`YYYY-MM-DDThh:mm:ss.sss+hh:mm`).
 */
export const TIMESTAMP_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$";

/** A calendar day (`YYYY-MM-DD`), as the delivery list's day filters take it. */
export const DAY_PATTERN = "^\\d{4}-\\d{2}-\\d{2}$";

/** Whether a `YYYY-MM-DD` text names a real day (2026-02-30 does not). */
export const isCalendarDay = (text: string) => parseTimestamp(`${text}T00:00:00Z`) !== null;

const timestampRegex = new RegExp(TIMESTAMP_PATTERN);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Parses a wire timestamp; null when the text is not one or names an impossible date. */
export function parseTimestamp(text: string): Date | null {
  if (!timestampRegex.test(text)) return null;
  // Date.parse rolls 2026-02-30 over to March and T24:00 to the next day: a real calendar date
  // and time must be checked by hand. (Read by field: this runs for every tracker position.)
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  // Year 0 exists for Date but not for PostgreSQL, which would refuse it with an error (a 500).
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day > (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0))) return null;
  if (Number(text.slice(11, 13)) > 23 || Number(text.slice(14, 16)) > 59 || Number(text.slice(17, 19)) > 59) {
    return null;
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/** Formats an instant for output, in UTC: `2026-11-21T09:30:00.000+00:00`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace("Z", "+00:00");
}
