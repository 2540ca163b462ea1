/** SQL of round positions, the place of a task and its ETA. */
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { onTaskZone, taskCoordinates } from "../../zones/zones.repository.ts";
import type { Point } from "./geo.ts";
import type { PositionSource } from "./positions.table.ts";

export interface NewPosition extends Point {
  roundId: number;
  source: PositionSource;
  recordedAt: Date;
}

/**
 * Keeps the newest position per round and source (an older one arriving late is ignored). One
 * statement for all: at most one position per round and source (a statement cannot update a row
 * twice).
 */
export async function upsertPositions(db: Db, positions: NewPosition[]) {
  if (positions.length === 0) return;
  await db
    .insertInto("round_positions")
    .values(
      positions.map((p) => ({
        round_id: p.roundId,
        source: p.source,
        latitude: p.latitude,
        longitude: p.longitude,
        recorded_at: p.recordedAt,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(["round_id", "source"])
        .doUpdateSet((eb) => ({
          latitude: eb.ref("excluded.latitude"),
          longitude: eb.ref("excluded.longitude"),
          recorded_at: eb.ref("excluded.recorded_at"),
          received_at: sql`now()`,
        }))
        .where("round_positions.recorded_at", "<", (eb) => eb.ref("excluded.recorded_at")),
    )
    .execute();
}

/** The latest positions (one per source) of each of these rounds. */
export function roundPositions(db: Db, roundIds: number[]) {
  return db.selectFrom("round_positions").selectAll().where("round_id", "in", roundIds).execute();
}

/**
 * The next task of a round: the first, in order, that is not completed and whose delivery is under
 * way. Its delivery row is share-locked until the transaction ends, so a status change completing
 * the task waits for the ETA written here (its event then carries it) or, having committed first,
 * takes the task out of this query: no ETA lands on a task after its delivery's last event.
 */
export function nextTaskOfRound(db: Db, roundId: number) {
  return db
    .selectFrom("round_tasks as rt")
    .innerJoin("tasks as t", "t.id", "rt.task_id")
    .innerJoin("deliveries as d", "d.id", "t.delivery_id")
    .leftJoin("delivery_zones as z", onTaskZone)
    .select(["t.id as task_id", "rt.eta_computed_at", ...taskCoordinates])
    .where("rt.round_id", "=", roundId)
    .where("t.completed_at", "is", null)
    .where("d.status", "in", ["scheduled", "picked_up"])
    .orderBy("rt.position")
    .limit(1)
    .forShare("d")
    .executeTakeFirst();
}

/**
 * Of these rounds, those with a task whose ETA may be recomputed now: not completed, its delivery
 * under way, its ETA never computed or computed `minIntervalMs` ago or more (storeEta's rule). A
 * round outside it would store no ETA, so a batch of positions skips its three queries.
 */
export async function roundsWithEtaDue(db: Db, roundIds: number[], minIntervalMs: number): Promise<number[]> {
  if (roundIds.length === 0) return [];
  const rows = await db
    .selectFrom("round_tasks as rt")
    .innerJoin("tasks as t", "t.id", "rt.task_id")
    .innerJoin("deliveries as d", "d.id", "t.delivery_id")
    .select("rt.round_id")
    .distinct()
    .where("rt.round_id", "in", roundIds)
    .where("t.completed_at", "is", null)
    .where("d.status", "in", ["scheduled", "picked_up"])
    .where((eb) =>
      eb.or([
        eb("rt.eta_computed_at", "is", null),
        eb("rt.eta_computed_at", "<=", sql<Date>`now() - make_interval(secs => ${minIntervalMs / 1000})`),
      ]),
    )
    .execute();
  return rows.map((r) => Number(r.round_id));
}

/** Stores an ETA unless one was computed less than `minIntervalMs` ago; true when stored. */
export async function storeEta(db: Db, taskId: number, eta: Date, minIntervalMs: number): Promise<boolean> {
  const result = await db
    .updateTable("round_tasks")
    .set({ eta_computed_at: sql`now()` })
    .where("task_id", "=", taskId)
    .where((eb) =>
      eb.or([
        eb("eta_computed_at", "is", null),
        eb("eta_computed_at", "<=", sql<Date>`now() - make_interval(secs => ${minIntervalMs / 1000})`),
      ]),
    )
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await db.updateTable("tasks").set({ eta }).where("id", "=", taskId).execute();
  return true;
}
