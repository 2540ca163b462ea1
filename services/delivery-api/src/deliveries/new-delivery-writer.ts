/**
 * Group commit of new deliveries: creates arriving together are written by one statement (one
 * round trip, one WAL flush) and each request is answered once that statement committed, so a
 * 201 still means durable. Every create was fully validated and priced before it came here; if
 * a batch still fails (a constraint, a saved address deleted meanwhile), each of its creates is
 * written alone, so one bad create fails only its own request (see batcher.ts).
 *
 * A batch can also fail after it committed (the connection lost before the answer): written
 * again alone, each create then meets its own id, which only it could have taken, already
 * stored; that create did commit, and is answered so.
 */
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { createBatcher } from "./batcher.ts";
import type { Pool } from "./named-statement.ts";
import { deliveryExists, insertNewDeliveriesAlone, type NewDeliveryWrite } from "./new-deliveries.repository.ts";

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "23505";

export interface NewDeliveryWriter {
  /** Resolves once the delivery and its event are committed; rejects with the database's error. */
  write(delivery: NewDeliveryWrite): Promise<void>;
}

export function createNewDeliveryWriter(db: Kysely<DB>, pool: Pool): NewDeliveryWriter {
  const batcher = createBatcher<NewDeliveryWrite, void>(
    async (deliveries) => {
      try {
        await insertNewDeliveriesAlone(db, pool, deliveries);
      } catch (error) {
        const [only] = deliveries;
        if (!only || deliveries.length > 1 || !isUniqueViolation(error)) throw error;
        if (!(await deliveryExists(db, only.rows.delivery.id))) throw error;
      }
      return deliveries.map(() => undefined);
    },
    { maxBatch: 100, concurrency: 2 },
  );
  return { write: (delivery) => batcher.run(delivery) };
}
