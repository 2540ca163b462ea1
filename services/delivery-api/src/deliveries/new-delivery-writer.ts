/**
 * Group commit of new deliveries: creates arriving together are written by one statement (one
 * round trip, one WAL flush) and each request is answered once that statement committed, so a
 * 201 still means durable. Every create was fully validated and priced before it came here; if
 * a batch still fails (a constraint, a saved address deleted meanwhile), it is halved until the
 * creates that fail are written alone (the kit batcher's `isolate` policy), so one bad create
 * fails only its own request.
 *
 * A batch can also fail after it committed (the connection lost before the answer): written
 * again alone, each create then meets its own event id and tracking tokens, random and its alone,
 * already stored; that create did commit, and is answered as stored.
 *
 * Once a batch committed, its first events go to `committed` (the relay publishes them at once).
 */

import { createBatcher, isUniqueViolation, type Pool } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { insertNewDeliveriesAlone, type NewDeliveryWrite, settleIfStored } from "./new-deliveries.repository.ts";

export interface NewDeliveryWriter {
  /** Resolves once the delivery and its event are committed; rejects with the database's error. */
  write(delivery: NewDeliveryWrite): Promise<void>;
}

export function createNewDeliveryWriter(
  db: Kysely<DB>,
  pool: Pool,
  committed: (writes: NewDeliveryWrite[]) => void = () => {},
): NewDeliveryWriter {
  const batcher = createBatcher<NewDeliveryWrite, undefined>({
    handle: async (deliveries) => {
      try {
        await insertNewDeliveriesAlone(db, pool, deliveries);
      } catch (error) {
        const [only] = deliveries;
        if (!only || deliveries.length > 1 || !isUniqueViolation(error)) throw error;
        if (!(await settleIfStored(db, only))) throw error;
      }
      committed(deliveries);
      return new Array(deliveries.length);
    },
    maxBatch: 100,
    concurrency: 2,
    onFailure: { policy: "isolate" },
  });
  return { write: (delivery) => batcher.add(delivery) };
}
