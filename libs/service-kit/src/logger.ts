/**
 * The JSON logger of every service: pino, with secrets redacted wherever they could appear, and
 * with tracing on, the `trace_id` and `span_id` of the active span on every line written in one.
 */
import { type DestinationStream, type Logger, pino } from "pino";
import { activeSpanFields, tracingEnabled } from "./tracing.ts";

/** Paths whose values never reach a log line. */
export const REDACTED_PATHS = [
  "req.headers.authorization",
  'req.headers["x-user-token"]',
  'req.headers["x-provider-token"]',
  'req.headers["webhook-signature"]',
  "headers.authorization",
  'headers["x-user-token"]',
  "token",
  "*.token",
  "secret",
  "*.secret",
  "password",
  "*.password",
  "config.DATABASE_URL",
];

/** Create it after initTracing: a logger made while tracing is off reads no span (nothing to pay). */
export function createLogger(service: string, level = "info", destination?: DestinationStream): Logger {
  return pino(
    {
      mixin: tracingEnabled() ? activeSpanFields : undefined,
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

export type { Logger };
