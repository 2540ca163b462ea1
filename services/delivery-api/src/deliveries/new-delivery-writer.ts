/**
 * Group commit of new deliveries: creates arriving together are written by one statement (one
 * round trip, one WAL flush) and each request is answered once that statement committed, so a
 * 201 still means durable. A lone create is written at the next turn of the event loop; under
 * load, creates gather while earlier batches are in flight, so batches grow with the load
 * instead of the latency. Every create was fully validated and priced before it came here; if a
 * batch still fails (a constraint, a saved address deleted meanwhile), each of its creates is
 * written alone, so one bad create fails only its own request.
 */
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { insertNewDeliveries, type NewDeliveryWrite } from "./new-deliveries.repository.ts";

export interface NewDeliveryWriter {
  /** Resolves once the delivery and its event are committed; rejects with the database's error. */
  write(delivery: NewDeliveryWrite): Promise<void>;
}

interface Pending {
  delivery: NewDeliveryWrite;
  resolve(): void;
  reject(error: unknown): void;
}

export interface WriterOptions {
  /** Most deliveries per statement. */
  maxBatch: number;
  /** Statements in flight at once (each holds a pooled connection while it runs). */
  concurrency: number;
}

export function createNewDeliveryWriter(
  db: Kysely<DB>,
  options: WriterOptions = { maxBatch: 100, concurrency: 2 },
): NewDeliveryWriter {
  let pending: Pending[] = [];
  let inFlight = 0;
  let scheduled = false;

  async function flush(batch: Pending[]): Promise<void> {
    try {
      await insertNewDeliveries(
        db,
        batch.map((item) => item.delivery),
      );
      for (const item of batch) item.resolve();
    } catch (error) {
      const [only] = batch;
      if (batch.length === 1 && only) return only.reject(error);
      await Promise.all(batch.map((item) => flush([item])));
    }
  }

  function pump() {
    scheduled = false;
    while (inFlight < options.concurrency && pending.length > 0) {
      const batch = pending.length <= options.maxBatch ? pending : pending.slice(0, options.maxBatch);
      pending = pending.length <= options.maxBatch ? [] : pending.slice(options.maxBatch);
      inFlight++;
      void flush(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return {
    write(delivery) {
      return new Promise<void>((resolve, reject) => {
        pending.push({ delivery, resolve, reject });
        // Gathers what arrives in this turn of the event loop; a busy writer picks it up when done.
        if (!scheduled && inFlight < options.concurrency) {
          scheduled = true;
          setImmediate(pump);
        }
      });
    },
  };
}
