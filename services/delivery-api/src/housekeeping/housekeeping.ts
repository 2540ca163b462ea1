/**
 * Housekeeping keeps the tables every change appends to bounded: every
 * API_HOUSEKEEPING_INTERVAL_MS (and once shortly after start, so that a service restarted more
 * often than that still cleans up) it deletes what has expired (housekeeping.repository.ts), in
 * batches, until a pass finds less than a full batch. Every replica runs it; two passes at once
 * only share the work.
 */
import type { AppMetrics } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import { PRUNE_BATCH, PRUNED_TABLES, type Pruned, pruneExpired } from "./housekeeping.repository.ts";

/** Passes of one run at most: a backlog larger than this many batches waits for the next run. */
const MAX_PASSES = 100;
const FIRST_RUN_DELAY_MS = 60_000;

const KEYS = Object.keys(PRUNED_TABLES) as Array<keyof Pruned>;

export interface Housekeeping {
  start(): void;
  stop(): Promise<void>;
}

export function createHousekeeping(options: {
  db: Kysely<DB>;
  logger: Logger;
  metrics: AppMetrics;
  outboxRetentionMs: number;
  auditRetentionMs: number;
  intervalMs: number;
}): Housekeeping {
  const { db, logger } = options;
  const deleted = options.metrics.counter(
    "housekeeping_deleted_rows_total",
    "Rows housekeeping deleted, by table: outbox (published events), fleet_outbox, idempotency_keys, audit_log.",
    ["table"],
  );
  let timers: NodeJS.Timeout[] = [];
  let running: Promise<void> | undefined;

  async function prune(): Promise<void> {
    const total: Pruned = { outbox: 0, fleetOutbox: 0, idempotencyKeys: 0, auditLog: 0 };
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const removed = await pruneExpired(db, options);
      for (const key of KEYS) {
        total[key] += removed[key];
        deleted.inc({ table: PRUNED_TABLES[key] }, removed[key]);
      }
      if (KEYS.every((key) => removed[key] < PRUNE_BATCH)) break;
    }
    if (KEYS.some((key) => total[key] > 0)) {
      logger.info({ removed: total }, "expired outbox events, idempotency records and audit entries removed");
    }
  }

  const run = () => {
    running ??= prune()
      .catch((error) => {
        logger.warn({ err: error }, "housekeeping pass failed; the next one retries");
      })
      .finally(() => {
        running = undefined;
      });
  };

  return {
    start() {
      if (timers.length > 0) return;
      timers = [
        setTimeout(run, Math.min(FIRST_RUN_DELAY_MS, options.intervalMs)),
        setInterval(run, options.intervalMs),
      ];
      for (const timer of timers) timer.unref();
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      timers = [];
      await running;
    },
  };
}
