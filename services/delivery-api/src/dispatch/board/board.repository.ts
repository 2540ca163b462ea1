/**
 * SQL of the dispatch board: a day's deliveries still to assign and the day's rounds with their
 * tasks. Each read is bounded by its page (keyset, with the indexes of migration 0005), never by
 * what the day holds.
 */
import { type Expression, type SqlBool, sql } from "kysely";
import type { Db } from "../../db/database.ts";

/** The instants a calendar day of `timeZone` starts and ends (23 or 25 hours apart on a DST change). */
export async function dayBounds(db: Db, day: string, timeZone: string) {
  const { rows } = await sql<{ starts_at: Date; ends_at: Date }>`
    select (${day}::date)::timestamp at time zone ${timeZone} as starts_at,
           (${day}::date + 1)::timestamp at time zone ${timeZone} as ends_at
  `.execute(db);
  return rows[0] as { starts_at: Date; ends_at: Date };
}

export interface Day {
  startsAt: Date;
  endsAt: Date;
}

/** The main task of a delivery (the pickup of an inbound one, else the dropoff): its slot is the delivery's day. */
const isMainTask = sql<SqlBool>`m.kind = case when d.direction = 'inbound' then 'pickup' else 'dropoff' end`;

/** Saved deliveries whose main task's slot starts in the day, on no round. */
function toAssign(db: Db, day: Day) {
  return db
    .selectFrom("tasks as m")
    .innerJoin("deliveries as d", "d.id", "m.delivery_id")
    .where("m.slot_starting_at", ">=", day.startsAt)
    .where("m.slot_starting_at", "<", day.endsAt)
    .where(isMainTask)
    .where("d.status", "=", "saved")
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("round_tasks as rt")
            .innerJoin("tasks as o", "o.id", "rt.task_id")
            .select("rt.task_id")
            .whereRef("o.delivery_id", "=", "d.id"),
        ),
      ),
    );
}

export interface DeliveryCursor {
  slotStartingAt: Date;
  deliveryId: number;
}

/** A page of the deliveries to assign, by their main task's slot start then id, after the cursor. */
export function listToAssign(db: Db, day: Day, after: DeliveryCursor | undefined, limit: number) {
  let query = toAssign(db, day)
    .innerJoin("accounts as a", "a.id", "d.account_id")
    .select([
      "d.id",
      "d.status",
      "d.direction",
      "d.client_order_reference",
      "d.created_at",
      "d.account_id",
      "a.company_name as account_name",
      "a.environment as account_environment",
      "m.slot_starting_at as main_slot_starting_at",
    ]);
  if (after) {
    const cursor: Expression<SqlBool> = sql<SqlBool>`(m.slot_starting_at, d.id) > (${after.slotStartingAt}, ${after.deliveryId})`;
    query = query.where(cursor);
  }
  return query.orderBy("m.slot_starting_at").orderBy("d.id").limit(limit).execute();
}

/** How many deliveries of the day are to assign (one indexed aggregate). */
export async function countToAssign(db: Db, day: Day): Promise<number> {
  const row = await toAssign(db, day)
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

const TASK_COLUMNS = [
  "t.id as task_id",
  "t.delivery_id",
  "t.kind",
  "t.slot_starting_at",
  "t.slot_ending_at",
  "t.eta",
  "t.started_at",
  "t.completed_at",
  "t.failure_reason",
  "t.recipient_name",
  "t.company_name",
  "t.address",
  "t.postal_code",
  "t.city",
] as const;

/** The tasks of these deliveries. */
export function tasksOfDeliveries(db: Db, deliveryIds: number[]) {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("tasks as t").select(TASK_COLUMNS).where("t.delivery_id", "in", deliveryIds).execute();
}

/**
 * The operator's rounds of the day after `afterId`, by id, with how many tasks each holds: those
 * holding a task whose slot starts in the day, and those created during it (planned for it before
 * any delivery was put on them). The simulator's own rounds are not the operator's.
 */
export function listDayRounds(db: Db, day: Day, afterId: number, limit: number) {
  const ofTheDay = db
    .selectFrom("tasks as t")
    .innerJoin("round_tasks as rt", "rt.task_id", "t.id")
    .select("rt.round_id as id")
    .where("t.slot_starting_at", ">=", day.startsAt)
    .where("t.slot_starting_at", "<", day.endsAt)
    .union(
      db.selectFrom("rounds").select("id").where("created_at", ">=", day.startsAt).where("created_at", "<", day.endsAt),
    );
  return db
    .selectFrom("rounds as r")
    .innerJoin("messengers as msg", "msg.id", "r.messenger_id")
    .leftJoin("vehicles as v", "v.id", "r.vehicle_id")
    .select([
      "r.id",
      "r.status",
      "r.started_at",
      "r.ended_at",
      "r.created_at",
      "r.messenger_id",
      "msg.name as messenger_name",
      "r.vehicle_id",
      "v.external_id as vehicle_external_id",
      "v.label as vehicle_label",
      (eb) =>
        eb
          .selectFrom("round_tasks as c")
          .select((c) => c.fn.countAll<string>().as("n"))
          .whereRef("c.round_id", "=", "r.id")
          .as("task_count"),
    ])
    .where("r.id", "in", ofTheDay)
    .where("r.simulated", "=", false)
    .where("r.id", ">", afterId)
    .orderBy("r.id")
    .limit(limit)
    .execute();
}

/** The tasks of these rounds in order, with their delivery's status and reference and its account's name. */
export function tasksOfRounds(db: Db, roundIds: number[]) {
  if (roundIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom("round_tasks as rt")
    .innerJoin("tasks as t", "t.id", "rt.task_id")
    .innerJoin("deliveries as d", "d.id", "t.delivery_id")
    .innerJoin("accounts as a", "a.id", "d.account_id")
    .select([
      "rt.round_id",
      "rt.position",
      ...TASK_COLUMNS,
      "d.status as delivery_status",
      "d.client_order_reference",
      "d.account_id",
      "a.company_name as account_name",
    ])
    .where("rt.round_id", "in", roundIds)
    .orderBy("rt.round_id")
    .orderBy("rt.position")
    .execute();
}
