/** SQL of rounds and their ordered tasks. */
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";

export function lockRound(db: Db, id: number) {
  return db.selectFrom("rounds").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

/** The round's tasks in order, with their delivery's status. */
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
