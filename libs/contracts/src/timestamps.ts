/**
 * Timestamps on the wire: ISO 8601 with an explicit UTC offset. Input may omit the fractional
 * seconds; output always carries milliseconds and an offset (`YYYY-MM-DDThh:mm:ss.sss+hh:mm`).
 */
export const TIMESTAMP_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$";

const timestampRegex = new RegExp(TIMESTAMP_PATTERN);

/** Parses a wire timestamp; null when the text is not one or names an impossible date. */
export function parseTimestamp(text: string): Date | null {
  if (!timestampRegex.test(text)) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // Date rolls 2026-02-30 over to March; a real calendar date must survive the round trip.
  const [datePart] = text.split("T");
  const offset = /(Z|[+-]\d{2}:\d{2})$/.exec(text)?.[1] ?? "Z";
  const local = new Date(date.getTime() + offsetMinutes(offset) * 60_000);
  if (local.toISOString().slice(0, 10) !== datePart) return null;
  return date;
}

function offsetMinutes(offset: string): number {
  if (offset === "Z") return 0;
  const sign = offset.startsWith("-") ? -1 : 1;
  const [hours, minutes] = offset.slice(1).split(":").map(Number);
  return sign * ((hours ?? 0) * 60 + (minutes ?? 0));
}

/** Formats an instant for output, in UTC: `2026-11-21T09:30:00.000+00:00`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace("Z", "+00:00");
}
