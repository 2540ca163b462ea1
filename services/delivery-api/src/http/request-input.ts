/**
 * The HTTP layer's request input shared by the features' routes: path ids and the operator API's
 * bounds. Body shapes themselves are TypeBox schemas next to each feature's routes; services take
 * plain values and never import this file.
 */
import { notFound } from "@dos/service-kit";

const ID_TEXT = /^[1-9][0-9]{0,15}$/;

/**
 * An id as the API writes it, a positive safe integer in digits with no leading zero; null for
 * anything else ("abc", "0", "01", "1e0", " 1"), which names a resource that cannot exist.
 */
export function parsePathId(raw: string): number | null {
  const id = ID_TEXT.test(raw) ? Number(raw) : Number.NaN;
  return Number.isSafeInteger(id) ? id : null;
}

/**
 * A path id. Anything but parsePathId's ids is a 404 like an unknown id (not a 422):
 * `GET /ops/v1/accounts/abc` → `account abc not found`.
 */
export function pathId(raw: string, label: string): number {
  const id = parsePathId(raw);
  if (id === null) throw notFound(`${label} ${raw.slice(0, 40)}`);
  return id;
}

/** Shared bounds of the operator API's numbers (ours; see docs/spec-decisions.md). */
export const OPS_LIMITS = {
  /** Gap and duration of the default-place task slot: at most a week. */
  slotMinutes: 7 * 24 * 60,
  /** Postal codes in one zones request. */
  zonesPerRequest: 5000,
  pageSizeMax: 500,
  pageSizeDefault: 100,
} as const;
