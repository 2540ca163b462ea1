/**
 * The outbox: every delivery change is recorded here in the transaction of the change, with the
 * delivery's next event sequence, and published later by the relay (outbox.relay.ts).
 */
import { randomUUID } from "node:crypto";
import type { Delivery, DeliveryEvent, DeliveryEventType, NatsNames } from "@dos/contracts";
import { formatTimestamp } from "@dos/contracts";
import { type Pool, runNamed, traceparentOf } from "@dos/service-kit";
import { type Kysely, sql } from "kysely";
import type { DB, Db } from "../db/database.ts";

/** The channel the relay LISTENs on; a commit with new outbox rows notifies it. */
export const OUTBOX_CHANNEL = "delivery_outbox";

export interface NewDeliveryEvent {
  type: DeliveryEventType;
  accountId: number;
  delivery: Delivery;
  previousStatus?: string;
}

/**
 * A new delivery's id and creation time are taken by the statement that writes it
 * (new-deliveries.repository.ts), after its first event was built: until then its representation,
 * subject and event text hold these placeholders. In the event's JSON text they read as a NUL
 * character escaped (`"\u0000..."`), which no stored text can hold (PostgreSQL refuses NUL in
 * text, and so does the client API): they cannot be mistaken for a client's text.
 */
export const NEW_DELIVERY_ID = "\u0000new-delivery-id";
export const NEW_DELIVERY_CREATED_AT = "\u0000new-delivery-created-at";

/** An event as the outbox stores and the relay publishes it, with its id and subject. */
export interface OutboxEvent {
  id: string;
  subject: string;
  envelope: DeliveryEvent;
  /** The trace context of the change (the request's span), published with the event; null when not traced. */
  traceparent: string | null;
}

/** The event announcing a change of `event.delivery`, numbered `sequence` in that delivery's events. */
export function deliveryEvent(names: NatsNames, event: NewDeliveryEvent, sequence: number): OutboxEvent {
  const id = randomUUID();
  const deliveryId = event.delivery.id;
  const envelope = {
    id,
    type: event.type,
    occurred_at: formatTimestamp(new Date()),
    account_id: event.accountId,
    delivery_id: deliveryId,
    sequence,
    payload: {
      delivery: event.delivery,
      ...(event.previousStatus ? { previous_status: event.previousStatus } : {}),
    },
  } satisfies DeliveryEvent;
  const subject = names.subjects.deliveryEvent(event.accountId, deliveryId, event.type);
  return { id, subject, envelope, traceparent: traceparentOf() };
}

/**
 * Appends an event of an existing delivery to the outbox with the delivery's next sequence. The
 * sequence comes from `deliveries.event_sequence`, incremented in the same statement, so the
 * delivery row stays locked until commit and two changes of one delivery can never share or swap
 * a sequence. `occurred_at` is the clock at insertion (not the transaction start): a later event
 * of the same delivery is always inserted after the earlier one committed, so ordering by it
 * keeps order. (A new delivery's first event is written with the delivery, see
 * new-deliveries.repository.ts.)
 */
export async function appendDeliveryEvent(db: Db, names: NatsNames, event: NewDeliveryEvent): Promise<DeliveryEvent> {
  const { id, subject, envelope, traceparent } = deliveryEvent(names, event, 0);
  const deliveryId = envelope.delivery_id;
  // The event's JSON text around its sequence, which the statement takes: the fields keep the
  // order receivers see documented (id, type, occurred_at, account_id, delivery_id, sequence, payload).
  const { sequence: _taken, payload, ...head } = envelope;
  const beforeSequence = `${JSON.stringify(head).slice(0, -1)},"sequence":`;
  const afterSequence = `,"payload":${JSON.stringify(payload)}}`;
  const { rows } = await sql<{ sequence: number }>`
    with next as (
      update deliveries set event_sequence = event_sequence + 1 where id = ${deliveryId} returning event_sequence
    )
    insert into outbox (id, account_id, delivery_id, sequence, type, subject, event, occurred_at, traceparent)
    select ${id}, ${event.accountId}, ${deliveryId}, next.event_sequence, ${event.type}, ${subject},
      ${beforeSequence} || next.event_sequence || ${afterSequence}, clock_timestamp(), ${traceparent}
    from next
    returning sequence, pg_notify(${OUTBOX_CHANNEL}, '') as notified
  `.execute(db);
  const sequence = rows[0]?.sequence;
  if (sequence === undefined) throw new Error(`delivery ${deliveryId} vanished while recording its event`);
  return { ...envelope, sequence };
}

export interface OutboxRow {
  id: string;
  delivery_id: number;
  subject: string;
  /** The event as JSON text, published as it is (no parse and re-serialisation per event). */
  event: string;
  traceparent: string | null;
}

/**
 * Which unpublished events a relay takes. A delivery's first event (sequence 1, its
 * `delivery.created`) is published by the process that wrote it, right after the commit (see
 * outbox.relay.ts, `publishCommitted`), and marked a moment later; a relay takes it only once
 * it is older than `graceMs` (that process died or its publish failed) or when a later event of
 * its delivery waits (which must not reach the stream before it). Every other event is the
 * relays' at once. Read from the partial index of unpublished rows.
 */
const relayTakes = (graceMs: number) => sql<boolean>`(o.sequence > 1
  or o.occurred_at < clock_timestamp() - make_interval(secs => ${graceMs / 1000})
  or exists (select 1 from outbox later where later.delivery_id = o.delivery_id and later.sequence > 1
    and later.published_at is null))`;

/** Whether a relay has anything to publish: one cheap statement, so a poll that finds nothing costs one. */
export async function relayHasWork(db: Db, graceMs: number): Promise<boolean> {
  const { rows } = await sql<{ work: boolean }>`
    select exists (select 1 from outbox o where o.published_at is null and ${relayTakes(graceMs)}) as work
  `.execute(db);
  return rows[0]?.work === true;
}

/** The oldest events a relay takes (see relayTakes), in an order that keeps each delivery's sequence. */
export function unpublishedEvents(db: Db, limit: number, graceMs: number): Promise<OutboxRow[]> {
  return db
    .selectFrom("outbox as o")
    .select([
      "o.id",
      "o.delivery_id",
      "o.subject",
      sql<string>`coalesce(o.event, o.payload::text)`.as("event"),
      "o.traceparent",
    ])
    .where("o.published_at", "is", null)
    .where(relayTakes(graceMs))
    .orderBy("o.occurred_at")
    .orderBy("o.delivery_id")
    .orderBy("o.sequence")
    .limit(limit)
    .execute();
}

/**
 * Events waiting and the age of the oldest, for the metrics: both read from the partial index
 * of unpublished rows (empty most of the time), so a scrape costs next to nothing.
 */
export async function outboxBacklog(db: Db): Promise<{ backlog: number; oldestAgeSeconds: number }> {
  const { rows } = await sql<{ backlog: number; age: number | null }>`
    select count(*)::int as backlog, extract(epoch from clock_timestamp() - min(occurred_at))::float8 as age
    from outbox where published_at is null
  `.execute(db);
  return { backlog: rows[0]?.backlog ?? 0, oldestAgeSeconds: Math.max(0, rows[0]?.age ?? 0) };
}

/** The ids as one array parameter: one statement text whatever their number (a list would be planned anew each time). */
const markStatement = (ids: string[]) => sql`update outbox set published_at = now() where id = any(${ids}::uuid[])`;

export async function markPublished(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await markStatement(ids).execute(db);
}

/** The same on its own, prepared: the relay marks the first events it published, a batch every 50 ms. */
export async function markPublishedAlone(db: Kysely<DB>, pool: Pool, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await runNamed(db, pool, "mark_outbox_published", markStatement(ids));
}

/**
 * Takes the relay's lock for the rest of the transaction. One relay publishes at a time across
 * replicas, which keeps every delivery's events in order on the stream; the others wait for
 * their next wake-up.
 */
export async function tryRelayLock(db: Db): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`
    select pg_try_advisory_xact_lock(hashtext('delivery-api.outbox-relay')) as locked
  `.execute(db);
  return rows[0]?.locked === true;
}

/**
 * The latest events of one of the account's deliveries, oldest first, as its timeline shows them:
 * the status after each comes from the delivery the event carries.
 */
export async function timelineEvents(db: Db, accountId: number, deliveryId: number, limit: number) {
  const rows = await db
    .selectFrom("outbox")
    .select([
      "id",
      "type",
      "occurred_at",
      "sequence",
      sql<string>`(coalesce(event, payload::text))::jsonb #>> '{payload,delivery,status}'`.as("status"),
      sql<string | null>`(coalesce(event, payload::text))::jsonb #>> '{payload,previous_status}'`.as("previous_status"),
    ])
    .where("account_id", "=", accountId)
    .where("delivery_id", "=", deliveryId)
    .orderBy("sequence", "desc")
    .limit(limit)
    .execute();
  return rows.reverse().map((row) => ({ ...row, occurred_at: formatTimestamp(row.occurred_at) }));
}
