/**
 * Group commit: positions from concurrent requests are gathered into one multi-row INSERT,
 * written when the batch is full or after a few milliseconds, and each request is answered
 * only once the statement holding its row has committed. While batches are in flight new
 * rows keep gathering, so batches grow with the load and PostgreSQL sees few, large writes.
 */
import type { Database } from "@dos/service-kit";
import type { Logger } from "pino";
import type { GeoMetrics } from "../metrics.ts";
import { insertPositions } from "./positions.repository.ts";
import type { PositionRow } from "./positions.table.ts";

/** The database refused this very row (not the connection): retrying it cannot help. */
export class PositionRefused extends Error {
  override name = "PositionRefused";
  constructor(cause: unknown) {
    super("the database refused the position", { cause });
  }
}

export interface WriterOptions {
  maxRows: number;
  maxDelayMs: number;
  concurrency: number;
  queueLimit: number;
}

export interface PositionWriter {
  /** Resolves once the row is committed (or was already stored); rejects when it could not be. */
  write(row: PositionRow): Promise<void>;
  /** Rows accepted and not yet committed. */
  readonly queued: number;
  /** True when the queue is full: a new row would only wait behind a slow database. */
  readonly full: boolean;
  /** Writes everything still queued, then resolves. */
  drain(): Promise<void>;
}

interface Pending {
  row: PositionRow;
  resolve(): void;
  reject(error: unknown): void;
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity): the rows, not the database, are at fault. */
const refusesData = (error: unknown) => /^2[23]/.test(String((error as { code?: unknown })?.code ?? ""));

const byVehicleAndTime = (a: Pending, b: Pending) =>
  a.row.vehicleExternalId < b.row.vehicleExternalId
    ? -1
    : a.row.vehicleExternalId > b.row.vehicleExternalId
      ? 1
      : a.row.recordedMs - b.row.recordedMs;

export function createPositionWriter(
  pool: Database<unknown>["pool"],
  options: WriterOptions,
  deps: { logger: Logger; metrics: GeoMetrics; onCommitted(rows: PositionRow[]): void },
): PositionWriter {
  let pending: Pending[] = [];
  let inFlight = 0;
  let inFlightRows = 0;
  let due = false;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let idle: Array<() => void> = [];

  const flush = async (batch: Pending[]) => {
    // Rows in key order: two concurrent batches touching the same keys then never deadlock.
    if (options.concurrency > 1) batch.sort(byVehicleAndTime);
    const rows = batch.map((item) => item.row);
    const started = performance.now();
    try {
      const inserted = await insertPositions(pool, rows);
      deps.metrics.writeSeconds.observe((performance.now() - started) / 1000);
      deps.metrics.batchRows.observe(rows.length);
      deps.metrics.written.inc(inserted);
      if (inserted < rows.length) deps.metrics.duplicates.inc(rows.length - inserted);
      deps.onCommitted(rows);
      for (const item of batch) item.resolve();
    } catch (error) {
      if (refusesData(error) && batch.length > 1) {
        // A row the database refuses (a case validation missed) must not take its batch down:
        // halve until the rows that can be stored are, and only the culprit is refused.
        const half = Math.ceil(batch.length / 2);
        await flush(batch.slice(0, half));
        await flush(batch.slice(half));
        return;
      }
      deps.metrics.writeFailures.inc(rows.length);
      deps.logger.error({ err: error, rows: rows.length }, "position batch could not be written");
      const reason = refusesData(error) ? new PositionRefused(error) : error;
      for (const item of batch) item.reject(reason);
    }
  };

  const pump = () => {
    while (inFlight < options.concurrency && pending.length > 0 && (due || pending.length >= options.maxRows)) {
      const batch = pending.length <= options.maxRows ? pending : pending.slice(0, options.maxRows);
      pending = pending.length <= options.maxRows ? [] : pending.slice(options.maxRows);
      inFlight++;
      inFlightRows += batch.length;
      void flush(batch).finally(() => {
        inFlight--;
        inFlightRows -= batch.length;
        pump();
      });
    }
    if (pending.length === 0) due = false;
    else if (!due && !timer) arm();
    if (pending.length === 0 && inFlight === 0 && idle.length > 0) {
      const waiters = idle;
      idle = [];
      for (const wake of waiters) wake();
    }
  };

  const fire = () => {
    timer = undefined;
    due = true;
    pump();
  };
  // A delay of 0 gathers what arrives in the same turn of the event loop; under load, rows
  // also gather while every write slot is busy, so batches grow without adding latency.
  const arm = () => {
    timer = options.maxDelayMs === 0 ? setImmediate(fire) : setTimeout(fire, options.maxDelayMs);
  };
  const disarm = () => {
    if (options.maxDelayMs === 0) clearImmediate(timer as NodeJS.Immediate);
    else clearTimeout(timer as NodeJS.Timeout);
    timer = undefined;
  };

  return {
    write(row) {
      return new Promise<void>((resolve, reject) => {
        pending.push({ row, resolve, reject });
        if (pending.length >= options.maxRows) pump();
        else if (!timer && !due) arm();
      });
    },
    get queued() {
      return pending.length + inFlightRows;
    },
    get full() {
      return pending.length + inFlightRows >= options.queueLimit;
    },
    drain() {
      disarm();
      due = true;
      return new Promise<void>((resolve) => {
        idle.push(resolve);
        pump();
      });
    },
  };
}
