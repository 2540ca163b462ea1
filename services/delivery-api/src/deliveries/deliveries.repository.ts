/**
 * SQL of the delivery operations. Every query is scoped to the caller's account: another
 * account's delivery is simply not found.
 */

import type { DeliveryStatus } from "@dos/contracts";
import { type Insertable, sql, type Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import type { DeliveriesTable, DeliveryPackagesTable, TaskKind, TasksTable } from "./deliveries.table.ts";
import type { StoredDelivery } from "./delivery-draft.ts";

/** A delivery with its tasks and packages; `forUpdate` locks the delivery row until the transaction ends. */
export async function findDelivery(
  db: Db,
  accountId: number,
  id: number,
  options: { forUpdate?: boolean } = {},
): Promise<StoredDelivery | undefined> {
  let query = db.selectFrom("deliveries").selectAll().where("id", "=", id).where("account_id", "=", accountId);
  if (options.forUpdate) query = query.forUpdate();
  const delivery = await query.executeTakeFirst();
  if (!delivery) return undefined;
  return loadParts(db, delivery);
}

async function loadParts(db: Db, delivery: StoredDelivery["delivery"]): Promise<StoredDelivery> {
  const tasks = await db.selectFrom("tasks").selectAll().where("delivery_id", "=", delivery.id).execute();
  const packages = await db
    .selectFrom("delivery_packages")
    .selectAll()
    .where("delivery_id", "=", delivery.id)
    .orderBy("position")
    .execute();
  return { delivery, tasks, packages };
}

/** Whether the account has this delivery. */
export async function deliveryExists(db: Db, accountId: number, id: number): Promise<boolean> {
  const row = await db
    .selectFrom("deliveries")
    .select("id")
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The newest delivery of the account (with that reference, when given). */
export async function findLatestDelivery(db: Db, accountId: number, reference: string | undefined) {
  let query = db.selectFrom("deliveries").selectAll().where("account_id", "=", accountId);
  if (reference !== undefined) query = query.where("client_order_reference", "=", reference);
  const delivery = await query.orderBy("id", "desc").limit(1).executeTakeFirst();
  return delivery ? loadParts(db, delivery) : undefined;
}

/** The list's filters (the days are UTC calendar days, inclusive). */
export interface ListFilter {
  accountId: number;
  reference?: string | undefined;
  status?: DeliveryStatus | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  slotFrom?: string | undefined;
  slotTo?: string | undefined;
}

/** The account's deliveries matching the filter, joined to their main task (pickup when inbound, else dropoff). */
function filteredDeliveries(db: Db, filter: ListFilter) {
  let query = db
    .selectFrom("deliveries as d")
    .innerJoin("tasks as t", (join) =>
      join
        .onRef("t.delivery_id", "=", "d.id")
        .on(sql<boolean>`t.kind = case when d.direction = 'inbound' then 'pickup' else 'dropoff' end`),
    )
    .where("d.account_id", "=", filter.accountId);
  if (filter.reference !== undefined) query = query.where("d.client_order_reference", "=", filter.reference);
  if (filter.status !== undefined) query = query.where("d.status", "=", filter.status);
  if (filter.createdFrom !== undefined) query = query.where("d.created_at", ">=", dayStart(filter.createdFrom));
  if (filter.createdTo !== undefined) query = query.where("d.created_at", "<", dayAfter(filter.createdTo));
  if (filter.slotFrom !== undefined) query = query.where("t.slot_starting_at", ">=", dayStart(filter.slotFrom));
  if (filter.slotTo !== undefined) query = query.where("t.slot_starting_at", "<", dayAfter(filter.slotTo));
  return query;
}

const dayStart = (day: string) => sql<Date>`(${day}::date)::timestamp at time zone 'UTC'`;
const dayAfter = (day: string) => sql<Date>`(${day}::date + 1)::timestamp at time zone 'UTC'`;

/** A page of the list, newest first, with the slot of the main task. */
export function listDeliveries(db: Db, filter: ListFilter, page: { limit: number; offset: number }) {
  return filteredDeliveries(db, filter)
    .select(["d.id", "d.created_at", "d.status", "d.price_cents", "t.slot_starting_at", "t.slot_ending_at"])
    .orderBy("d.id", "desc")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countDeliveries(db: Db, filter: ListFilter): Promise<number> {
  const row = await filteredDeliveries(db, filter)
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

type PackageValues = Omit<Insertable<DeliveryPackagesTable>, "delivery_id" | "position">;

function insertPackages(db: Db, deliveryId: number, packages: PackageValues[]) {
  return db
    .insertInto("delivery_packages")
    .values(packages.map((p, position) => ({ ...p, delivery_id: deliveryId, position })))
    .returningAll()
    .execute();
}

export function updateDeliveryRow(db: Db, id: number, values: Updateable<DeliveriesTable>) {
  return db
    .updateTable("deliveries")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateTask(db: Db, deliveryId: number, kind: TaskKind, values: Updateable<TasksTable>) {
  return db
    .updateTable("tasks")
    .set(values)
    .where("delivery_id", "=", deliveryId)
    .where("kind", "=", kind)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Replaces every package of a delivery (an update's `packages` replaces the whole array). */
export async function replacePackages(db: Db, deliveryId: number, packages: PackageValues[]) {
  await db.deleteFrom("delivery_packages").where("delivery_id", "=", deliveryId).execute();
  return insertPackages(db, deliveryId, packages);
}

/** Locks the delivery row for the rest of the transaction; returns its status and event sequence. */
export function lockDelivery(db: Db, accountId: number, id: number) {
  return db
    .selectFrom("deliveries")
    .select(["status", "event_sequence", "redelivery_id"])
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .forUpdate()
    .executeTakeFirst();
}

/** The account a delivery belongs to, whichever it is (operator routes and dispatch). */
export async function deliveryOwner(db: Db, id: number) {
  return (await db.selectFrom("deliveries").select("account_id").where("id", "=", id).executeTakeFirst())?.account_id;
}
