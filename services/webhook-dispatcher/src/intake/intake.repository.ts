/**
 * Intake of one delivery event: the event is stored once, and one message per matching enabled
 * endpoint of its account is queued, in one transaction (idempotent on the event id, so a
 * redelivered event queues nothing twice).
 */
import type { DeliveryEvent } from "@dos/contracts";
import { type Kysely, sql } from "kysely";
import type { DB, Db } from "../db/database.ts";
import { lockQueues, settleQueues } from "../queue/queue.repository.ts";

export interface IntakeOptions {
  /** How long a message waits for its delivery's previous event when that one has not arrived. */
  orderGraceMs: number;
}

/** Records the event; returns how many messages were queued (0 when it was already recorded). */
export async function recordEvent(
  db: Kysely<DB>,
  event: DeliveryEvent,
  body: string,
  options: IntakeOptions,
): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const inserted = await tx
      .insertInto("events")
      .values({
        id: event.id,
        account_id: event.account_id,
        delivery_id: event.delivery_id,
        sequence: event.sequence,
        type: event.type,
        body,
        occurred_at: new Date(event.occurred_at),
      })
      .onConflict((oc) => oc.column("id").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!inserted) return 0;

    const endpointIds = await matchingEndpointIds(tx, event.account_id, event.type);
    if (endpointIds.length === 0) return 0;
    // Events of one delivery can reach two replicas at once; an event whose predecessor has not
    // arrived yet waits a little for it, so the receiver still sees them in order.
    const predecessorArrived = event.sequence <= 1 || (await eventExists(tx, event.delivery_id, event.sequence - 1));
    const notBefore = new Date(Date.now() + (predecessorArrived ? 0 : options.orderGraceMs));
    for (const endpointId of endpointIds) {
      await lockQueues(tx, endpointId, [event.delivery_id]);
      await tx
        .insertInto("messages")
        .values({
          endpoint_id: endpointId,
          event_id: event.id,
          delivery_id: event.delivery_id,
          sequence: event.sequence,
          not_before: notBefore,
        })
        .onConflict((oc) => oc.columns(["endpoint_id", "event_id"]).doNothing())
        .execute();
      // A successor that was waiting for this event need not wait any longer.
      await tx
        .updateTable("messages")
        .set({ not_before: sql<Date>`now()` })
        .where("endpoint_id", "=", endpointId)
        .where("delivery_id", "=", event.delivery_id)
        .where("sequence", "=", event.sequence + 1)
        .where("state", "=", "pending")
        .execute();
      await settleQueues(tx, endpointId, [event.delivery_id]);
    }
    return endpointIds.length;
  });
}

async function matchingEndpointIds(tx: Db, accountId: number, type: string): Promise<string[]> {
  const rows = await tx
    .selectFrom("endpoints")
    .select("id")
    .where("account_id", "=", accountId)
    .where("status", "=", "enabled")
    .where("deleted_at", "is", null)
    .where((eb) => eb.or([eb("event_types", "is", null), eb(sql.val(type), "=", eb.fn.any("event_types"))]))
    .orderBy("id")
    .execute();
  return rows.map((row) => row.id);
}

async function eventExists(tx: Db, deliveryId: number, sequence: number): Promise<boolean> {
  const row = await tx
    .selectFrom("events")
    .select("id")
    .where("delivery_id", "=", deliveryId)
    .where("sequence", "=", sequence)
    .executeTakeFirst();
  return row !== undefined;
}
