/** The courier simulator's tables: each account's setting and the deliveries it drives. */
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { onTaskZone, taskCoordinates } from "../../zones/zones.repository.ts";

export const findSimulatorSetting = (db: Db, accountId: number) =>
  db.selectFrom("courier_simulators").selectAll().where("account_id", "=", accountId).executeTakeFirst();

/** Switches the simulator on or off; `stepMs` undefined keeps the current step. */
export async function saveSimulatorSetting(
  db: Db,
  setting: { accountId: number; enabled: boolean; stepMs: number | undefined; defaultStepMs: number },
) {
  const { accountId, enabled, stepMs } = setting;
  await db
    .insertInto("courier_simulators")
    .values({ account_id: accountId, enabled, step_ms: stepMs ?? setting.defaultStepMs })
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet({
        enabled,
        step_ms: stepMs === undefined ? sql`courier_simulators.step_ms` : stepMs,
        // Deliveries created from the moment it is switched on are simulated, not older ones.
        enabled_at: sql`case when courier_simulators.enabled then courier_simulators.enabled_at else now() end`,
      }),
    )
    .execute();
}

/** The simulated messenger, created the first time it is needed. */
export async function simulatedMessengerId(db: Db): Promise<number> {
  const found = await db.selectFrom("messengers").select("id").where("simulated", "=", true).executeTakeFirst();
  if (found) return found.id;
  const row = await db
    .insertInto("messengers")
    .values({ name: "Test-environment courier", simulated: true })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** New saved deliveries of opted-in test accounts join the simulation. */
export async function enqueueSimulatedDeliveries(db: Db) {
  await sql`
      insert into simulated_deliveries (delivery_id, account_id, next_at)
      select d.id, d.account_id, now() + make_interval(secs => s.step_ms / 1000.0)
      from deliveries d
      join courier_simulators s on s.account_id = d.account_id and s.enabled
      join accounts a on a.id = d.account_id and a.environment = 'test'
      where d.status = 'saved' and d.created_at >= s.enabled_at
      on conflict (delivery_id) do nothing
    `.execute(db);
}

/** A simulated delivery's tasks with their coordinates. */
export function simulatedTaskPlaces(db: Db, deliveryId: number) {
  return db
    .selectFrom("tasks as t")
    .innerJoin("deliveries as d", "d.id", "t.delivery_id")
    .leftJoin("delivery_zones as z", onTaskZone)
    .select(["t.id", "t.kind", "t.recipient_name", ...taskCoordinates])
    .where("t.delivery_id", "=", deliveryId)
    .execute();
}

/**
 * The next due simulation row of an enabled test account, locked (SKIP LOCKED: replicas share
 * the work). Switched off (or the account moved to production): its deliveries stop where they are.
 */
export function claimDueSimulation(db: Db) {
  return (
    db
      .selectFrom("simulated_deliveries as s")
      .innerJoin("courier_simulators as c", "c.account_id", "s.account_id")
      .innerJoin("accounts as a", "a.id", "s.account_id")
      .select(["s.delivery_id", "s.round_id", "s.step", "c.step_ms"])
      // Switched off (or the account moved to production): its deliveries stop where they are.
      .where("c.enabled", "=", true)
      .where("a.environment", "=", "test")
      .where("s.done", "=", false)
      .where("s.next_at", "<=", sql<Date>`now()`)
      .orderBy("s.next_at")
      .limit(1)
      // Only the simulation row: the steps below write from other connections, and a lock on
      // the account row would block their foreign-key checks (and every create of the account).
      .forUpdate("s")
      .skipLocked()
      .executeTakeFirst()
  );
}

export async function advanceSimulation(
  db: Db,
  deliveryId: number,
  values: { step: number; round_id: number | null; done: boolean; next_at: Date },
) {
  await db.updateTable("simulated_deliveries").set(values).where("delivery_id", "=", deliveryId).execute();
}
