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
  const ms = parseTimestampMs(text);
  return ms === null ? null : new Date(ms);
}

/** parseTimestamp as milliseconds since the epoch, with no Date made (it runs for every tracker position). */
export function parseTimestampMs(text: string): number | null {
  if (text.length === CANONICAL_LENGTH) {
    const ms = canonicalMs(text);
    if (ms !== undefined) return ms;
  }
  if (!timestampRegex.test(text)) return null;
  // Date.parse rolls 2026-02-30 over to March and T24:00 to the next day: a real calendar date
  // and time must be checked by hand. (Read by field: this runs for every tracker position.)
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  if (!realDay(year, month, day)) return null;
  if (Number(text.slice(11, 13)) > 23 || Number(text.slice(14, 16)) > 59 || Number(text.slice(17, 19)) > 59) {
    return null;
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

function realDay(year: number, month: number, day: number): boolean {
  // Year 0 exists for Date but not for PostgreSQL, which would refuse it with an error (a 500).
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0));
}

/** `YYYY-MM-DDThh:mm:ss.sssZ`: what toISOString writes, and so what most trackers send. */
const CANONICAL_LENGTH = 24;
const DIGIT_POSITIONS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];
const SEPARATORS: Array<[number, number]> = [
  [4, 0x2d], // -
  [7, 0x2d],
  [10, 0x54], // T
  [13, 0x3a], // :
  [16, 0x3a],
  [19, 0x2e], // .
  [23, 0x5a], // Z
];

/**
 * The canonical form read field by field, without the pattern or Date.parse: the instant, null
 * for an impossible date or time, undefined when the text is not in that form (or its year is
 * before 1000, which Date.UTC would read as 19xx) and the general path must judge it.
 */
function canonicalMs(text: string): number | null | undefined {
  for (const [at, code] of SEPARATORS) if (text.charCodeAt(at) !== code) return undefined;
  for (const at of DIGIT_POSITIONS) {
    const code = text.charCodeAt(at);
    if (code < 0x30 || code > 0x39) return undefined;
  }
  const digits = (from: number, to: number) => {
    let value = 0;
    for (let i = from; i < to; i++) value = value * 10 + text.charCodeAt(i) - 0x30;
    return value;
  };
  const year = digits(0, 4);
  if (year < 1000) return undefined;
  const month = digits(5, 7);
  const day = digits(8, 10);
  const hour = digits(11, 13);
  const minute = digits(14, 16);
  const second = digits(17, 19);
  if (!realDay(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  return Date.UTC(year, month - 1, day, hour, minute, second, digits(20, 23));
}

/** Formats an instant for output, in UTC: `2026-11-21T09:30:00.000+00:00`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace("Z", "+00:00");
}
