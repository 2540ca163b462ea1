/** SQL of rounds and their ordered tasks. */
import { type Insertable, sql, type Updateable } from "kysely";
import type { Db } from "../../db/database.ts";
import type { RoundStatus, RoundsTable } from "./rounds.table.ts";

export function lockRound(db: Db, id: number) {
  return db.selectFrom("rounds").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

/** The round's tasks in order, with their delivery's status, and where and when each is. */
export function roundTasks(db: Db, roundId: number) {
  return db
    .selectFrom("round_tasks as rt")
    .innerJoin("tasks as t", "t.id", "rt.task_id")
    .innerJoin("deliveries as d", "d.id", "t.delivery_id")
    .select([
      "rt.position",
      "t.id as task_id",
      "t.delivery_id",
      "t.kind",
      "d.status",
      "t.started_at",
      "t.completed_at",
      "t.eta",
      "t.failure_reason",
      "t.recipient_name",
      "t.company_name",
      "t.address",
      "t.postal_code",
      "t.city",
      "t.slot_starting_at",
      "t.slot_ending_at",
    ])
    .where("rt.round_id", "=", roundId)
    .orderBy("rt.position")
    .execute();
}

/** Appends tasks at the end of the round, in the order given. */
export async function appendRoundTasks(db: Db, roundId: number, taskIds: number[]) {
  const { rows } = await sql<{ next: number }>`
    select coalesce(max(position), 0) + 1 as next from round_tasks where round_id = ${roundId}
  `.execute(db);
  const next = rows[0]?.next ?? 1;
  await db
    .insertInto("round_tasks")
    .values(taskIds.map((task_id, i) => ({ round_id: roundId, task_id, position: next + i })))
    .execute();
}

/**
 * Gives the round's tasks the positions 1..n in the order given (every task of the round, each
 * once). The primary key (round_id, position) is checked row by row, so the positions are first
 * moved out of the way (negated), then set.
 */
export async function setRoundTaskOrder(db: Db, roundId: number, taskIds: number[]) {
  await sql`update round_tasks set position = -position where round_id = ${roundId}`.execute(db);
  await sql`
    update round_tasks rt set position = o.position
    from unnest(${taskIds}::bigint[]) with ordinality as o (task_id, position)
    where rt.round_id = ${roundId} and rt.task_id = o.task_id
  `.execute(db);
}

/** Forgets the ETAs of these tasks (they are no longer the next stop; the next one's is recomputed). */
export async function clearEtas(db: Db, taskIds: number[]) {
  if (taskIds.length === 0) return;
  await db.updateTable("round_tasks").set({ eta_computed_at: null }).where("task_id", "in", taskIds).execute();
  await db.updateTable("tasks").set({ eta: null }).where("id", "in", taskIds).execute();
}

/** How many deliveries have tasks on the round. */
export async function deliveriesOnRound(db: Db, roundId: number): Promise<number> {
  const row = await db
    .selectFrom("round_tasks as rt")
    .innerJoin("tasks as t", "t.id", "rt.task_id")
    .select((eb) => eb.fn.count<string>("t.delivery_id").distinct().as("n"))
    .where("rt.round_id", "=", roundId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The delivery of each of these tasks that exists. */
export function deliveriesOfTasks(db: Db, taskIds: number[]) {
  if (taskIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("tasks").select(["id", "delivery_id", "kind"]).where("id", "in", taskIds).execute();
}

/** The round a task belongs to, if any. */
export function roundOfTask(db: Db, taskId: number) {
  return db
    .selectFrom("round_tasks as rt")
    .innerJoin("rounds as r", "r.id", "rt.round_id")
    .select(["r.id", "r.status", "r.vehicle_id", "r.messenger_id"])
    .where("rt.task_id", "=", taskId)
    .executeTakeFirst();
}

/** The round a delivery's tasks are in, if any. */
export function roundOfDelivery(db: Db, deliveryId: number) {
  return db
    .selectFrom("round_tasks as rt")
    .innerJoin("tasks as t", "t.id", "rt.task_id")
    .select("rt.round_id")
    .where("t.delivery_id", "=", deliveryId)
    .executeTakeFirst();
}

/** A round with its messenger's name and its vehicle's External ID and label. */
export function findRound(db: Db, id: number) {
  return db
    .selectFrom("rounds as r")
    .innerJoin("messengers as m", "m.id", "r.messenger_id")
    .leftJoin("vehicles as v", "v.id", "r.vehicle_id")
    .selectAll("r")
    .select(["m.name as messenger_name", "v.external_id as vehicle_external_id", "v.label as vehicle_label"])
    .where("r.id", "=", id)
    .executeTakeFirst();
}

export async function insertRound(db: Db, values: Insertable<RoundsTable>) {
  return (await db.insertInto("rounds").values(values).returning("id").executeTakeFirstOrThrow()).id;
}

/** The operator's rounds, newest first (the simulator's own are not listed). */
export async function listRoundIds(db: Db, status: RoundStatus | undefined, limit: number) {
  let query = db.selectFrom("rounds").select("id").where("simulated", "=", false);
  if (status) query = query.where("status", "=", status);
  return (await query.orderBy("id", "desc").limit(limit).execute()).map((row) => row.id);
}

export async function updateRound(db: Db, id: number, values: Updateable<RoundsTable>) {
  await db.updateTable("rounds").set(values).where("id", "=", id).execute();
}

/** Takes tasks out of whatever round they are in. */
export async function removeRoundTasks(db: Db, taskIds: number[]) {
  await db.deleteFrom("round_tasks").where("task_id", "in", taskIds).execute();
}

/** The delivery a task belongs to, if the task exists. */
export async function deliveryIdOfTask(db: Db, taskId: number) {
  return (await db.selectFrom("tasks").select("delivery_id").where("id", "=", taskId).executeTakeFirst())?.delivery_id;
}

/**
 * The active rounds of a messenger or of a vehicle: one at most, by the unique indexes (a list
 * keeps the callers simple).
 */
export async function activeRoundIdsOf(db: Db, holder: "messenger_id" | "vehicle_id", id: number) {
  const rows = await db
    .selectFrom("rounds")
    .select("id")
    .where(holder, "=", id)
    .where("status", "=", "active")
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Of these (round, vehicle External ID) pairs, the rounds that are active with that vehicle: one
 * query for a whole batch of tracker positions.
 */
export async function activeRoundsOfVehicles(
  db: Db,
  pairs: Array<{ roundId: number; vehicleExternalId: string }>,
): Promise<Set<number>> {
  if (pairs.length === 0) return new Set();
  const { rows } = await sql<{ id: number }>`
    select r.id
      from unnest(${pairs.map((p) => p.roundId)}::bigint[], ${pairs.map((p) => p.vehicleExternalId)}::text[])
           as given(round_id, external_id)
      join rounds r on r.id = given.round_id and r.status = 'active'
      join vehicles v on v.id = r.vehicle_id and v.external_id = given.external_id`.execute(db);
  return new Set(rows.map((r) => Number(r.id)));
}
