/**
 * Writes new deliveries (created or redelivered) with their tasks, packages and first outbox
 * event in ONE statement: data-modifying CTEs over JSON rows, so one delivery or a hundred cost
 * one round trip, and the statement is atomic on its own (outside a transaction it commits as
 * it ends). Nothing is read back: ids and creation times were taken beforehand (the catalogue
 * query's stamp), so the rows written are the rows the caller already holds. No NOTIFY: the
 * process that commits a first event publishes it itself (OutboxRelay.publishCommitted).
 */

import { type Pool, runNamed } from "@dos/service-kit";
import { type Kysely, type Selectable, sql } from "kysely";
import type { DB, Db } from "../db/database.ts";
import type { OutboxEvent, OutboxRow } from "../outbox/outbox.repository.ts";
import type { ShownRows } from "./deliveries.mappers.ts";
import type { DeliveriesTable, DeliveryPackagesTable, TasksTable } from "./deliveries.table.ts";

/** The rows of a new delivery, as they will be stored (generated task and package ids aside). */
export interface NewDeliveryRows extends ShownRows {
  delivery: ShownRows["delivery"] &
    Pick<Selectable<DeliveriesTable>, "account_id" | "sender_display_name" | "price_tariff_id" | "event_sequence"> & {
      price_lines: string;
    };
  tasks: Array<
    ShownRows["tasks"][number] &
      Pick<Selectable<TasksTable>, "delivery_id" | "at_default_place" | "saved_address_id" | "latitude" | "longitude">
  >;
  packages: Array<ShownRows["packages"][number] & Pick<Selectable<DeliveryPackagesTable>, "delivery_id" | "position">>;
}

export interface NewDeliveryWrite {
  rows: NewDeliveryRows;
  event: OutboxEvent;
  /** The event as the JSON text stored and published: the envelope's fields in their documented order. */
  eventText: string;
}

/** The first event of a new delivery as a relay publishes it. */
export function firstEventRow({ rows, event, eventText }: NewDeliveryWrite): OutboxRow {
  return {
    id: event.id,
    delivery_id: rows.delivery.id,
    subject: event.subject,
    event: eventText,
    traceparent: event.traceparent,
  };
}

/** Inside a transaction (a create with an Idempotency-Key, a redelivery). */
export async function insertNewDeliveries(trx: Db, writes: NewDeliveryWrite[]): Promise<void> {
  await newDeliveriesStatement(writes).execute(trx);
}

/** On its own (the group commit): a prepared statement, committed as it ends. */
export async function insertNewDeliveriesAlone(db: Kysely<DB>, pool: Pool, writes: NewDeliveryWrite[]) {
  await runNamed(db, pool, "insert_new_deliveries", newDeliveriesStatement(writes));
}

/** Whether a delivery with this id is stored (ids are taken before writing, see the catalogue read). */
export async function deliveryExists(db: Kysely<DB>, id: number): Promise<boolean> {
  const row = await db.selectFrom("deliveries").select("id").where("id", "=", id).executeTakeFirst();
  return row !== undefined;
}

function newDeliveriesStatement(writes: NewDeliveryWrite[]) {
  // price_lines is JSON text already (as priced): it travels as a string and is cast once.
  const deliveries = writes.map(({ rows }) => rows.delivery);
  const tasks = writes.flatMap(({ rows }) => rows.tasks);
  const packages = writes.flatMap(({ rows }) => rows.packages);
  const events = writes.map(({ rows, event, eventText }) => ({
    id: event.id,
    account_id: rows.delivery.account_id,
    delivery_id: rows.delivery.id,
    sequence: event.envelope.sequence,
    type: event.envelope.type,
    subject: event.subject,
    event: eventText,
    traceparent: event.traceparent,
  }));
  return sql`
    with new_deliveries as (
      insert into deliveries (id, account_id, status, direction, comments, client_order_reference,
        sender_display_name, bring_back_containers, price_cents, price_tariff_id, price_lines,
        original_delivery_id, event_sequence, created_at, updated_at)
      overriding system value
      select id, account_id, status, direction, comments, client_order_reference, sender_display_name,
        bring_back_containers, price_cents, price_tariff_id, price_lines::jsonb, original_delivery_id,
        event_sequence, created_at, created_at
      from jsonb_to_recordset(${JSON.stringify(deliveries)}::jsonb) as r(id bigint, account_id bigint,
        status text, direction text, comments text, client_order_reference text, sender_display_name text,
        bring_back_containers boolean, price_cents integer, price_tariff_id bigint, price_lines text,
        original_delivery_id bigint, event_sequence integer, created_at timestamptz)
    ),
    new_tasks as (
      insert into tasks (delivery_id, kind, at_default_place, saved_address_id, slot_starting_at, slot_ending_at,
        recipient_name, recipient_phone, recipient_email, company_name, address, postal_code, city,
        address_instructions, latitude, longitude, tracking_token)
      select delivery_id, kind, at_default_place, saved_address_id, slot_starting_at, slot_ending_at,
        recipient_name, recipient_phone, recipient_email, company_name, address, postal_code, city,
        address_instructions, latitude, longitude, tracking_token
      from jsonb_to_recordset(${JSON.stringify(tasks)}::jsonb) as r(delivery_id bigint, kind text,
        at_default_place boolean, saved_address_id bigint, slot_starting_at timestamptz, slot_ending_at timestamptz,
        recipient_name text, recipient_phone text, recipient_email text, company_name text, address text,
        postal_code text, city text, address_instructions text, latitude double precision,
        longitude double precision, tracking_token text)
    ),
    new_packages as (
      insert into delivery_packages (delivery_id, position, package_type_id, type, name, amount, volume_dm3,
        weight_kg, fragility, temperature, client_reference)
      select delivery_id, position, package_type_id, type, name, amount, volume_dm3, weight_kg, fragility,
        temperature, client_reference
      from jsonb_to_recordset(${JSON.stringify(packages)}::jsonb) as r(delivery_id bigint, position integer,
        package_type_id bigint, type text, name text, amount integer, volume_dm3 numeric, weight_kg numeric,
        fragility text, temperature text, client_reference text)
    ),
    new_events as (
      insert into outbox (id, account_id, delivery_id, sequence, type, subject, event, occurred_at, traceparent)
      select id, account_id, delivery_id, sequence, type, subject, event, clock_timestamp(), traceparent
      from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as r(id uuid, account_id bigint,
        delivery_id bigint, sequence integer, type text, subject text, event text, traceparent text)
    )
    select 1 as written
  `;
}
