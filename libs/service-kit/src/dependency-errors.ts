/** Recognises errors that mean PostgreSQL or NATS is unreachable, so callers get a 503, not a 500. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH"]);
const MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error",
  "connection closed",
  "CONNECTION_CLOSED",
  "DISCONNECT",
  "TIMEOUT",
  "no responders",
];

export function isDependencyDown(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown; cause?: unknown } | null;
  if (!e) return false;
  if (typeof e.code === "string") {
    // PostgreSQL: class 08 (connection exception), 57P01-57P03 (shutdown, cannot connect now).
    if (NETWORK_CODES.has(e.code) || e.code.startsWith("08") || /^57P0[1-3]$/.test(e.code)) return true;
  }
  if (typeof e.message === "string" && MESSAGES.some((m) => (e.message as string).includes(m))) return true;
  return e.cause !== undefined && e.cause !== error && isDependencyDown(e.cause);
}
