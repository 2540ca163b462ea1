/** The JSON logger of every service: pino, with secrets redacted wherever they could appear. */
import { type Logger, pino } from "pino";

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

export function createLogger(service: string, level = "info"): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    formatters: { level: (label) => ({ level: label }) },
  });
}

export type { Logger };
