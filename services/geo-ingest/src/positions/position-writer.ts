/**
 * Group commit: positions from concurrent requests are gathered into one multi-row INSERT,
 * written when the batch is full or after a few milliseconds, and each request is answered
 * only once the statement holding its row has committed. While batches are in flight new
 * rows keep gathering, so batches grow with the load and PostgreSQL sees few, large writes.
 */
import type { Database } from "@dos/service-kit";
import type { Logger } from "pino";
import type { GeoMetrics } from "../metrics.ts";
import { findStoredPositions, insertPositions } from "./positions.repository.ts";
import type { PositionRow } from "./positions.table.ts";

/** The database refused this very row (not the connection): retrying it cannot help. */
export class PositionRefused extends Error {
  override name = "PositionRefused";
  constructor(cause: unknown) {
    super("the database refused the position", { cause });
  }
}

/** A different position of the vehicle is already stored at the timestamp its tracker gave. */
export class TimestampTaken extends Error {
  override name = "TimestampTaken";
  constructor() {
    super("a different position of the vehicle is stored at this timestamp");
  }
}

/**
 * A server stamp (the time of the call) that meets another position of its vehicle moves on
 * by a microsecond and is written again: the tracker gave no time, so its position is stored
 * rather than refused. One request per second per vehicle makes this rare (replicas behind a
 * misrouting ingress, a clock stepped back); the bound keeps a pathological case finite.
 */
const RESTAMP_ATTEMPTS = 5;
const MICROSECOND_MS = 0.001;

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

  const flush = async (batch: Pending[], restamps = 0): Promise<void> => {
    // Rows in key order: two concurrent batches touching the same keys then never deadlock.
    if (options.concurrency > 1) batch.sort(byVehicleAndTime);
    const rows = batch.map((item) => item.row);
    const started = performance.now();
    let inserted: number;
    try {
      inserted = await insertPositions(pool, rows);
    } catch (error) {
      if (refusesData(error) && batch.length > 1) {
        // A row the database refuses (a case validation missed) must not take its batch down:
        // halve until the rows that can be stored are, and only the culprit is refused.
        const half = Math.ceil(batch.length / 2);
        await flush(batch.slice(0, half), restamps);
        await flush(batch.slice(half), restamps);
        return;
      }
      fail(batch, refusesData(error) ? new PositionRefused(error) : error);
      return;
    }
    deps.metrics.writeSeconds.observe((performance.now() - started) / 1000);
    deps.metrics.batchRows.observe(rows.length);
    deps.metrics.written.inc(inserted);
    if (inserted === rows.length) {
      deps.onCommitted(rows);
      for (const item of batch) item.resolve();
      return;
    }
    await settle(batch, inserted, restamps);
  };

  const fail = (batch: Pending[], reason: unknown) => {
    deps.metrics.writeFailures.inc(batch.length);
    deps.logger.error({ err: reason, rows: batch.length }, "position batch could not be written");
    for (const item of batch) item.reject(reason);
  };

  /**
   * Some rows met a stored position at their vehicle and time (a second round trip, only then):
   * a row the table holds as it is, whoever inserted it, is answered 200; another place at a
   * timestamp the tracker gave is refused; a server stamp moves on and is written again.
   */
  const settle = async (batch: Pending[], inserted: number, restamps: number) => {
    let stored: boolean[];
    try {
      stored = await findStoredPositions(
        pool,
        batch.map((item) => item.row),
      );
    } catch (error) {
      // The new rows are committed but answered 503: a tracker's retry of a timestamped position
      // is then answered 200 without a second row (one without a timestamp is stamped anew).
      fail(batch, error);
      return;
    }
    const kept: Pending[] = [];
    const restamped: Pending[] = [];
    batch.forEach((item, i) => {
      if (stored[i]) kept.push(item);
      else if (!item.row.serverStamped) item.reject(new TimestampTaken());
      else if (restamps < RESTAMP_ATTEMPTS) {
        item.row.recordedMs += MICROSECOND_MS;
        restamped.push(item);
      } else fail([item], new Error("no free microsecond for a server-stamped position"));
    });
    deps.metrics.duplicates.inc(Math.max(0, kept.length - inserted));
    deps.onCommitted(kept.map((item) => item.row));
    for (const item of kept) item.resolve();
    if (restamped.length > 0) await flush(restamped, restamps + 1);
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
