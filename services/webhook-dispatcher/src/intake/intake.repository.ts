/**
 * Intake of delivery events, a batch at a time: each event is stored once, and one message per
 * matching enabled endpoint of its account is queued, all in one transaction (idempotent on the
 * event id, so a redelivered event queues nothing twice). Set-based statements keep the cost per
 * batch, not per event.
 */
import type { DeliveryEvent } from "@dos/contracts";
import { type Kysely, sql } from "kysely";
import type { DB, Db } from "../db/database.ts";
import { lockQueuePairs, settleQueuePairs } from "../queue/queue.repository.ts";

export interface IntakeOptions {
  /** How long a message waits for its delivery's previous event when that one has not arrived. */
  orderGraceMs: number;
}

export interface IncomingEvent {
  event: DeliveryEvent;
  /** The exact bytes published: the body every attempt POSTs and signs. */
  body: string;
  /** The trace context its POSTs continue; null when it came untraced. */
  traceparent: string | null;
}

/** Records the events; returns how many messages were queued. */
export async function recordEvents(db: Kysely<DB>, incoming: IncomingEvent[], options: IntakeOptions): Promise<number> {
  if (incoming.length === 0) return 0;
  return db.transaction().execute(async (tx) => {
    const inserted = await tx
      .insertInto("events")
      .values(
        incoming.map(({ event, body, traceparent }) => ({
          id: event.id,
          account_id: event.account_id,
          delivery_id: event.delivery_id,
          sequence: event.sequence,
          type: event.type,
          body,
          traceparent,
          occurred_at: new Date(event.occurred_at),
        })),
      )
      .onConflict((oc) => oc.column("id").doNothing())
      .returning("id")
      .execute();
    const fresh = new Set(inserted.map((row) => row.id));
    // A batch may carry one event twice (a redelivery beside the original): queue it once.
    const seen = new Set<string>();
    const events = incoming
      .map(({ event }) => event)
      .filter((event) => fresh.has(event.id) && !seen.has(event.id) && seen.add(event.id));
    if (events.length === 0) return 0;

    const endpoints = await enabledEndpoints(tx, [...new Set(events.map((e) => e.account_id))]);
    const arrived = await predecessorsArrived(tx, events);
    const now = Date.now();
    const messages = events.flatMap((event) =>
      endpoints
        .filter((ep) => ep.account_id === event.account_id && (!ep.event_types || ep.event_types.includes(event.type)))
        .map((ep) => ({
          endpoint_id: ep.id,
          event_id: event.id,
          delivery_id: event.delivery_id,
          sequence: event.sequence,
          // Events of one delivery can reach two replicas at once; one whose predecessor has not
          // arrived yet waits a little for it, so the receiver still sees them in order.
          not_before: new Date(arrived.has(event.id) ? now : now + options.orderGraceMs),
        })),
    );
    if (messages.length === 0) return 0;

    await lockQueuePairs(tx, messages);
    await tx
      .insertInto("messages")
      .values(messages)
      .onConflict((oc) => oc.columns(["endpoint_id", "event_id"]).doNothing())
      .execute();
    // A successor that was waiting for one of these events need not wait any longer.
    await sql`
      update messages m set not_before = now()
      from unnest(${messages.map((m) => m.endpoint_id)}::uuid[], ${messages.map((m) => m.delivery_id)}::bigint[],
        ${messages.map((m) => m.sequence)}::int[]) as x(e, d, s)
      where m.endpoint_id = x.e and m.delivery_id = x.d and m.sequence = x.s + 1 and m.state = 'pending'
        and m.not_before > now()
    `.execute(tx);
    await settleQueuePairs(tx, messages);
    return messages.length;
  });
}

async function enabledEndpoints(tx: Db, accountIds: number[]) {
  return tx
    .selectFrom("endpoints")
    .select(["id", "account_id", "event_types"])
    .where("account_id", "in", accountIds)
    .where("status", "=", "enabled")
    .where("deleted_at", "is", null)
    .orderBy("id")
    .execute();
}

/** The ids of the events whose delivery's previous event has arrived (or that are first). */
async function predecessorsArrived(tx: Db, events: DeliveryEvent[]): Promise<Set<string>> {
  const later = events.filter((e) => e.sequence > 1);
  const arrived = new Set(events.filter((e) => e.sequence <= 1).map((e) => e.id));
  if (later.length === 0) return arrived;
  const { rows } = await sql<{ id: string }>`
    select x.id from unnest(${later.map((e) => e.id)}::uuid[], ${later.map((e) => e.delivery_id)}::bigint[],
      ${later.map((e) => e.sequence)}::int[]) as x(id, d, s)
    where exists (select 1 from events e where e.delivery_id = x.d and e.sequence = x.s - 1)
  `.execute(tx);
  for (const row of rows) arrived.add(row.id);
  return arrived;
}
