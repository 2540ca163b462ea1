/**
 * Group commit (the kit's batcher): positions from concurrent requests are gathered into one
 * multi-row INSERT, written when the batch is full or after a few milliseconds, and each request
 * is answered only once the statement holding its row has committed. While batches are in flight
 * new rows keep gathering, so batches grow with the load and PostgreSQL sees few, large writes.
 * Failure policy `isolate`, for data errors only: a row the database refuses (a case validation
 * missed) must not take its batch down, while a database that is away fails the batch at once
 * (the tracker retries; a queue of retries would only hold memory).
 */
import { createBatcher, type Database, ItemRefused, refusesData } from "@dos/service-kit";
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

type Outcome = undefined | ItemRefused;

/** The order a batch is written in when batches run concurrently (the benchmark's floor uses it too). */
export const byVehicleAndTime = (a: PositionRow, b: PositionRow) =>
  a.vehicleExternalId < b.vehicleExternalId
    ? -1
    : a.vehicleExternalId > b.vehicleExternalId
      ? 1
      : a.recordedMs - b.recordedMs;

export function createPositionWriter(
  pool: Database<unknown>["pool"],
  options: WriterOptions,
  deps: { logger: Logger; metrics: GeoMetrics; onCommitted(rows: PositionRow[]): void },
): PositionWriter {
  const failed = (reason: unknown, rows: number) => {
    deps.metrics.writeFailures.inc(rows);
    deps.logger.error({ err: reason, rows }, "position batch could not be written");
  };

  /** One INSERT; the rows it did not insert met a stored position at their vehicle and time. */
  const insert = async (rows: PositionRow[]): Promise<number> => {
    const started = performance.now();
    let inserted: number;
    try {
      inserted = await insertPositions(pool, rows);
    } catch (error) {
      throw refusesData(error) ? new PositionRefused(error) : error;
    }
    deps.metrics.writeSeconds.observe((performance.now() - started) / 1000);
    deps.metrics.batchRows.observe(rows.length);
    deps.metrics.written.inc(inserted);
    return inserted;
  };

  const writeBatch = async (rows: PositionRow[]): Promise<Outcome[]> => {
    const outcomes = new Array<Outcome>(rows.length);
    const inserted = await insert(rows);
    if (inserted === rows.length) {
      deps.onCommitted(rows);
      return outcomes;
    }
    // A failure here fails the whole batch: its new rows are committed but answered 503, and a
    // tracker's retry of a timestamped position is then answered 200 without a second row (one
    // without a timestamp is stamped anew).
    let restamped = await settle(
      rows,
      rows.map((_, i) => i),
      inserted,
      0,
      outcomes,
    );
    for (let restamps = 1; restamped.length > 0; restamps++) {
      const again = restamped.map((i) => rows[i] as PositionRow);
      try {
        const insertedAgain = await insert(again);
        if (insertedAgain === again.length) {
          deps.onCommitted(again);
          break;
        }
        restamped = await settle(rows, restamped, insertedAgain, restamps, outcomes);
      } catch (error) {
        // Only the restamped rows fail: the rest of the batch is answered already.
        failed(error, again.length);
        for (const i of restamped) outcomes[i] = new ItemRefused(error);
        break;
      }
    }
    return outcomes;
  };

  /**
   * Some rows (`indexes` into the batch) met a stored position at their vehicle and time (a
   * second round trip, only then): a row the table holds as it is, whoever inserted it, is
   * answered 200; another place at a timestamp the tracker gave is refused; a server stamp moves
   * on by a microsecond. Answers the indexes of the rows to write again.
   */
  const settle = async (
    rows: PositionRow[],
    indexes: number[],
    inserted: number,
    restamps: number,
    outcomes: Outcome[],
  ): Promise<number[]> => {
    const stored = await findStoredPositions(
      pool,
      indexes.map((i) => rows[i] as PositionRow),
    );
    const kept: PositionRow[] = [];
    const restamped: number[] = [];
    indexes.forEach((index, i) => {
      const row = rows[index] as PositionRow;
      if (stored[i]) kept.push(row);
      else if (!row.serverStamped) outcomes[index] = new ItemRefused(new TimestampTaken());
      else if (restamps < RESTAMP_ATTEMPTS) {
        row.recordedMs += MICROSECOND_MS;
        restamped.push(index);
      } else {
        const reason = new Error("no free microsecond for a server-stamped position");
        failed(reason, 1);
        outcomes[index] = new ItemRefused(reason);
      }
    });
    deps.metrics.duplicates.inc(Math.max(0, kept.length - inserted));
    deps.onCommitted(kept);
    return restamped;
  };

  const batcher = createBatcher<PositionRow, undefined>({
    handle: writeBatch,
    maxBatch: options.maxRows,
    concurrency: options.concurrency,
    lingerMs: options.maxDelayMs,
    // Rows in key order: two concurrent batches touching the same keys then never deadlock.
    order: options.concurrency > 1 ? byVehicleAndTime : undefined,
    onFailure: { policy: "isolate", when: (error) => error instanceof PositionRefused },
    onRejected: failed,
  });

  return {
    write: (row) => batcher.add(row),
    get queued() {
      return batcher.queued;
    },
    get full() {
      return batcher.queued >= options.queueLimit;
    },
    drain: () => batcher.drain(),
  };
}
