/**
 * The audit page's filters and page as its URL holds them (`/staff/audit?person=7&resource_type=rounds`),
 * so a filtered view is a link another person can open. Kept apart from the page, which is loaded
 * on demand: the router reads the URL before the page's code arrives.
 */

export interface AuditSearch {
  /** `automation`, or a staff person's id (anything else is kept for the API to refuse). */
  person?: number | string;
  resource_type?: string;
  resource_id?: number | string;
  /** The keyset of an older page: entries before this id. */
  before_id?: number;
}

/**
 * A value as the URL should hold it: a number when it is one, so that the router writes
 * `person=7`, not the quoted `person=%227%22` it keeps a string of digits as.
 */
function plainValueOf(value: unknown): number | string | undefined {
  const text = typeof value === "string" ? value.trim().slice(0, 200) : typeof value === "number" ? String(value) : "";
  if (text === "") return undefined;
  return /^[1-9][0-9]{0,15}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text;
}

/** Keeps what the URL holds that can be a filter; the API judges the values (a 422 beside the field). */
export function auditSearchOf(search: Record<string, unknown>): AuditSearch {
  const result: AuditSearch = {};
  const person = plainValueOf(search.person);
  if (person !== undefined) result.person = person;
  const type = plainValueOf(search.resource_type);
  if (type !== undefined) result.resource_type = String(type);
  const id = plainValueOf(search.resource_id);
  if (id !== undefined) result.resource_id = id;
  const before = plainValueOf(search.before_id);
  if (typeof before === "number") result.before_id = before;
  return result;
}
