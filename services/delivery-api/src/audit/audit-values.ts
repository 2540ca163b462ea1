/**
 * What the audit log keeps of a resource before and after a change: its JSON, with every secret
 * redacted and its size bounded. Pure rules (unit-tested in test/audit-values.test.ts).
 *
 * Secrets: a field whose name is `token`, `secret`, `password`, or ends in `_token`, `_secret`,
 * `_password` or `_key` (API and staff tokens, tracker tokens, webhook signing secrets); any
 * string that starts like one of the secrets this system mints (`dos_staff_`, `whsec_`); and in
 * an answer marked `Cache-Control: no-store` (a secret shown once), also every string of 24
 * characters or more that is not a timestamp, whatever its field is called, unless the field
 * names what is shown elsewhere anyway (`id`, `*_id`, `url`, `label`, `name`, `email`).
 *
 * Size: strings are cut at 1,000 characters and arrays at 50 items (a marker says how much was
 * left out); nesting deeper than 8 levels is cut; if the JSON is still over 16 KiB, the same
 * with 100 characters and 5 items; if still over, only a note of the size is kept.
 */

export const REDACTED = "[redacted]";
/** Largest JSON text kept for one value (before or after). */
export const MAX_VALUE_BYTES = 16 * 1024;
/** An answer larger than this is not parsed at all. */
const MAX_PARSED_BYTES = 1024 * 1024;

const SECRET_NAME = /^(token|secret|password)$|_(token|secret|password|key)$/i;
const SECRET_VALUE = /^(dos_staff_|whsec_)/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const LONG_STRING = 24;
/** Fields of a shown-once answer that the resource's other answers show too. */
const SHOWN_ELSEWHERE = /^(id|.+_id|url|label|name|email)$/;

/** The value with every secret replaced by "[redacted]"; `shownOnce` for a no-store answer. */
export function redactSecrets(value: unknown, shownOnce = false, key = ""): unknown {
  if (typeof value === "string") {
    if (SECRET_VALUE.test(value)) return REDACTED;
    const ordinary = TIMESTAMP.test(value) || SHOWN_ELSEWHERE.test(key);
    if (shownOnce && value.length >= LONG_STRING && !ordinary) return REDACTED;
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, shownOnce, key));
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // A boolean or null under a secret's name says whether there is one (`has_provider_token`), not what it is.
    const telling = item === null || typeof item === "boolean";
    copy[key] = SECRET_NAME.test(key) && !telling ? REDACTED : redactSecrets(item, shownOnce, key);
  }
  return copy;
}

interface Bounds {
  chars: number;
  items: number;
  depth: number;
}
const FIRST: Bounds = { chars: 1000, items: 50, depth: 8 };
const SECOND: Bounds = { chars: 100, items: 5, depth: 4 };

function prune(value: unknown, bounds: Bounds, depth = 0): unknown {
  if (typeof value === "string") {
    return value.length > bounds.chars
      ? `${value.slice(0, bounds.chars)}… (${value.length - bounds.chars} more characters)`
      : value;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= bounds.depth) return "… (nested too deep)";
  if (Array.isArray(value)) {
    const kept = value.slice(0, bounds.items).map((item) => prune(item, bounds, depth + 1));
    if (value.length > bounds.items) kept.push(`… (${value.length - bounds.items} more items)`);
    return kept;
  }
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = prune(item, bounds, depth + 1);
  return copy;
}

/** The JSON text stored for a value (null for none): redacted first, then bounded. */
export function auditJson(value: unknown, shownOnce = false): string | null {
  if (value === undefined || value === null) return null;
  const redacted = redactSecrets(value, shownOnce);
  for (const bounds of [FIRST, SECOND]) {
    const text = JSON.stringify(prune(redacted, bounds));
    if (Buffer.byteLength(text) <= MAX_VALUE_BYTES) return text;
  }
  return JSON.stringify({ truncated: `over ${MAX_VALUE_BYTES} bytes even when cut; not kept` });
}

/** An answer's JSON body, or undefined when it is not JSON (or too large to be worth parsing). */
export function parseAnswer(payload: unknown, contentType: string | undefined): unknown {
  if (!contentType?.includes("json")) return undefined;
  const text = typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? payload.toString("utf8") : undefined;
  if (text === undefined || text === "") return undefined;
  if (text.length > MAX_PARSED_BYTES) return { truncated: `answer of ${text.length} characters; not kept` };
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
