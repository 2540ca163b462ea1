/**
 * Writes new deliveries (created or redelivered) with their tasks, packages and first outbox
 * event in ONE statement: data-modifying CTEs over JSON rows, so one delivery or a hundred cost
 * one round trip, and the statement is atomic on its own (outside a transaction it commits as
 * it ends). The statement takes each delivery's id (from the sequence, in the order given) and
 * creation time (to the millisecond the API shows) and puts them into the first event's subject
 * and text as it stores them (the placeholders of outbox.repository.ts); the writes are then
 * completed with the same values, so the answer, the stored event and the published one agree to
 * the byte. Nothing else is read back. No NOTIFY: the process that commits a first event
 * publishes it itself (OutboxRelay.publishCommitted).
 */

import { type Delivery, formatTimestamp } from "@dos/contracts";
import { type Pool, runNamed } from "@dos/service-kit";
import { type Kysely, type Selectable, sql } from "kysely";
import type { DB, Db } from "../db/database.ts";
import {
  NEW_DELIVERY_CREATED_AT,
  NEW_DELIVERY_ID,
  type OutboxEvent,
  type OutboxRow,
} from "../outbox/outbox.repository.ts";
import type { ShownRows } from "./deliveries.mappers.ts";
import type { DeliveriesTable, DeliveryPackagesTable, TasksTable } from "./deliveries.table.ts";

/** The rows of a new delivery, as they will be stored (ids, creation time and generated ids aside). */
export interface NewDeliveryRows {
  delivery: Omit<ShownRows["delivery"], "id" | "created_at"> &
    Pick<Selectable<DeliveriesTable>, "account_id" | "sender_display_name" | "price_tariff_id" | "event_sequence"> & {
      price_lines: string;
    };
  tasks: Array<
    ShownRows["tasks"][number] &
      Pick<Selectable<TasksTable>, "at_default_place" | "saved_address_id" | "latitude" | "longitude">
  >;
  packages: Array<ShownRows["packages"][number] & Pick<Selectable<DeliveryPackagesTable>, "position">>;
}

/** What a new delivery's statement took for it. */
export interface NewDeliveryStamp {
  id: number;
  createdAt: Date;
}

/**
 * A new delivery as it will be written, answered and announced. Until it is written, `delivery`,
 * `event` and `eventText` hold the placeholders of its id and creation time; writing it puts the
 * values in (and sets `stamp`).
 */
export interface NewDeliveryWrite {
  rows: NewDeliveryRows;
  /** The v2 representation answered, and carried by the event. */
  delivery: Delivery;
  event: OutboxEvent;
  /** The event as the JSON text stored and published: the envelope's fields in their documented order. */
  eventText: string;
  stamp: NewDeliveryStamp | null;
}

/** The first event of a written delivery as a relay publishes it. */
export function firstEventRow({ event, eventText, stamp }: NewDeliveryWrite): OutboxRow {
  if (!stamp) throw new Error("a delivery's first event is published only once it is written");
  return {
    id: event.id,
    delivery_id: stamp.id,
    subject: event.subject,
    event: eventText,
    traceparent: event.traceparent,
  };
}

/** Inside a transaction (a create with an Idempotency-Key, a redelivery). */
export async function insertNewDeliveries(trx: Db, writes: NewDeliveryWrite[]): Promise<void> {
  const { rows } = await newDeliveriesStatement(writes).execute(trx);
  settleAll(writes, rows);
}

/** On its own (the group commit): a prepared statement, committed as it ends. */
export async function insertNewDeliveriesAlone(db: Kysely<DB>, pool: Pool, writes: NewDeliveryWrite[]) {
  settleAll(writes, await runNamed(db, pool, "insert_new_deliveries", newDeliveriesStatement(writes)));
}

/**
 * Completes a write that was already committed, by its event id (random, the write's alone): a
 * statement whose answer was lost, written again, meets its own event and tracking tokens. False
 * when it is not stored.
 */
export async function settleIfStored(db: Kysely<DB>, write: NewDeliveryWrite): Promise<boolean> {
  const row = await db
    .selectFrom("outbox as o")
    .innerJoin("deliveries as d", "d.id", "o.delivery_id")
    .select(["d.id", "d.created_at"])
    .where("o.id", "=", write.event.id)
    .executeTakeFirst();
  if (!row) return false;
  settle(write, { id: row.id, createdAt: row.created_at });
  return true;
}

const ID_IN_TEXT = JSON.stringify(NEW_DELIVERY_ID);
const CREATED_AT_IN_TEXT = JSON.stringify(NEW_DELIVERY_CREATED_AT);

function settleAll(writes: NewDeliveryWrite[], rows: Array<{ id: number; created_at: Date }>) {
  if (rows.length !== writes.length) throw new Error("the new deliveries' statement lost a delivery");
  writes.forEach((write, ord) => {
    const row = rows[ord] as { id: number; created_at: Date };
    settle(write, { id: row.id, createdAt: row.created_at });
  });
}

/** Puts the id and creation time a statement took into the write, as the statement put them into the event. */
function settle(write: NewDeliveryWrite, stamp: NewDeliveryStamp) {
  const createdAt = formatTimestamp(stamp.createdAt);
  write.stamp = stamp;
  write.delivery.id = stamp.id;
  write.delivery.created_at = createdAt;
  write.event.envelope.delivery_id = stamp.id;
  write.event.subject = write.event.subject.replace(NEW_DELIVERY_ID, String(stamp.id));
  write.eventText = write.eventText
    .replaceAll(ID_IN_TEXT, String(stamp.id))
    .replaceAll(CREATED_AT_IN_TEXT, JSON.stringify(createdAt));
}

function newDeliveriesStatement(writes: NewDeliveryWrite[]) {
  // Each row names its delivery by its place in `writes` (ord); the statement gives it its id.
  // price_lines is JSON text already (as priced): it travels as a string and is cast once.
  const deliveries = writes.map(({ rows }, ord) => ({ ord, ...rows.delivery }));
  const tasks = writes.flatMap(({ rows }, ord) => rows.tasks.map((task) => ({ ord, ...task })));
  const packages = writes.flatMap(({ rows }, ord) => rows.packages.map((item) => ({ ord, ...item })));
  const events = writes.map(({ rows, event, eventText }, ord) => {
    const [subjectHead, subjectTail] = event.subject.split(NEW_DELIVERY_ID);
    return {
      ord,
      id: event.id,
      account_id: rows.delivery.account_id,
      sequence: event.envelope.sequence,
      type: event.envelope.type,
      subject_head: subjectHead,
      subject_tail: subjectTail,
      event: eventText,
      traceparent: event.traceparent,
    };
  });
  return sql<{ id: number; created_at: Date }>`
    with ids as materialized (
      select ord, nextval('deliveries_id_seq') as id, date_trunc('milliseconds', now()) as created_at
      from generate_series(0, ${writes.length - 1}::integer) as ord
    ),
    new_deliveries as (
      insert into deliveries (id, account_id, status, direction, comments, client_order_reference,
        sender_display_name, bring_back_containers, price_cents, price_tariff_id, price_lines,
        original_delivery_id, event_sequence, created_at, updated_at)
      overriding system value
      select ids.id, account_id, status, direction, comments, client_order_reference, sender_display_name,
        bring_back_containers, price_cents, price_tariff_id, price_lines::jsonb, original_delivery_id,
        event_sequence, ids.created_at, ids.created_at
      from jsonb_to_recordset(${JSON.stringify(deliveries)}::jsonb) as r(ord integer, account_id bigint,
        status text, direction text, comments text, client_order_reference text, sender_display_name text,
        bring_back_containers boolean, price_cents integer, price_tariff_id bigint, price_lines text,
        original_delivery_id bigint, event_sequence integer)
      join ids using (ord)
    ),
    new_tasks as (
      insert into tasks (delivery_id, kind, at_default_place, saved_address_id, slot_starting_at, slot_ending_at,
        recipient_name, recipient_phone, recipient_email, company_name, address, postal_code, city,
        address_instructions, latitude, longitude, tracking_token)
      select ids.id, kind, at_default_place, saved_address_id, slot_starting_at, slot_ending_at,
        recipient_name, recipient_phone, recipient_email, company_name, address, postal_code, city,
        address_instructions, latitude, longitude, tracking_token
      from jsonb_to_recordset(${JSON.stringify(tasks)}::jsonb) as r(ord integer, kind text,
        at_default_place boolean, saved_address_id bigint, slot_starting_at timestamptz, slot_ending_at timestamptz,
        recipient_name text, recipient_phone text, recipient_email text, company_name text, address text,
        postal_code text, city text, address_instructions text, latitude double precision,
        longitude double precision, tracking_token text)
      join ids using (ord)
    ),
    new_packages as (
      insert into delivery_packages (delivery_id, position, package_type_id, type, name, amount, volume_dm3,
        weight_kg, fragility, temperature, client_reference)
      select ids.id, position, package_type_id, type, name, amount, volume_dm3, weight_kg, fragility,
        temperature, client_reference
      from jsonb_to_recordset(${JSON.stringify(packages)}::jsonb) as r(ord integer, position integer,
        package_type_id bigint, type text, name text, amount integer, volume_dm3 numeric, weight_kg numeric,
        fragility text, temperature text, client_reference text)
      join ids using (ord)
    ),
    new_events as (
      insert into outbox (id, account_id, delivery_id, sequence, type, subject, event, occurred_at, traceparent)
      select r.id, account_id, ids.id, sequence, type, subject_head || ids.id || subject_tail,
        replace(replace(event, ${ID_IN_TEXT}, ids.id::text), ${CREATED_AT_IN_TEXT},
          '"' || to_char(ids.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') || '+00:00"'),
        clock_timestamp(), traceparent
      from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as r(ord integer, id uuid, account_id bigint,
        sequence integer, type text, subject_head text, subject_tail text, event text, traceparent text)
      join ids using (ord)
    )
    select id, created_at from ids order by ord
  `;
}
