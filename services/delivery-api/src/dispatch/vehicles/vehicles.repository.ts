/** The vehicles table. */
import type { Insertable, Updateable } from "kysely";
import type { Db } from "../../db/database.ts";
import type { VehiclesTable } from "./vehicles.table.ts";

/**
 * Vehicles with their active round (and its messenger) and their tracker's latest position: that
 * of the newest of their rounds holding one (rounds of a vehicle follow each other, so the newest
 * round's is the latest). One statement whatever the number of vehicles; each vehicle's position
 * is an index walk back through its rounds, stopped at the first with a tracker position.
 */
function vehicles(db: Db) {
  return db
    .selectFrom("vehicles as v")
    .leftJoin("rounds as r", (join) => join.onRef("r.vehicle_id", "=", "v.id").on("r.status", "=", "active"))
    .leftJoin("messengers as m", "m.id", "r.messenger_id")
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("rounds as pr")
          .innerJoin("round_positions as rp", (join) =>
            join.onRef("rp.round_id", "=", "pr.id").on("rp.source", "=", "tracker"),
          )
          .select(["rp.latitude", "rp.longitude", "rp.recorded_at", "rp.received_at", "rp.round_id"])
          .whereRef("pr.vehicle_id", "=", "v.id")
          .orderBy("pr.id", "desc")
          .limit(1)
          .as("lp"),
      (join) => join.onTrue(),
    )
    .selectAll("v")
    .select([
      "r.id as active_round_id",
      "r.started_at as active_round_started_at",
      "r.messenger_id as active_round_messenger_id",
      "m.name as active_round_messenger_name",
      "lp.latitude as position_latitude",
      "lp.longitude as position_longitude",
      "lp.recorded_at as position_recorded_at",
      "lp.received_at as position_received_at",
      "lp.round_id as position_round_id",
    ]);
}

/** A vehicle as the operator API shows it (see `vehicles`). */
export const findVehicle = (db: Db, id: number) => vehicles(db).where("v.id", "=", id).executeTakeFirst();

/** A page of the vehicles as the operator API shows them, by id. */
export const listVehicles = (db: Db, window: { offset: number; limit: number }) =>
  vehicles(db).orderBy("v.id").offset(window.offset).limit(window.limit).execute();

export type VehicleRow = NonNullable<Awaited<ReturnType<typeof findVehicle>>>;

export const insertVehicle = async (db: Db, values: Insertable<VehiclesTable>) =>
  (await db.insertInto("vehicles").values(values).returning("id").executeTakeFirstOrThrow()).id;

export async function updateVehicle(db: Db, id: number, values: Updateable<VehiclesTable>) {
  await db.updateTable("vehicles").set(values).where("id", "=", id).execute();
}

/** Creates the vehicle unless one has its external id; either way, its id. */
export async function ensureVehicle(db: Db, values: Insertable<VehiclesTable> & { external_id: string }) {
  await db
    .insertInto("vehicles")
    .values(values)
    .onConflict((oc) => oc.column("external_id").doNothing())
    .execute();
  const row = await db
    .selectFrom("vehicles")
    .select("id")
    .where("external_id", "=", values.external_id)
    .executeTakeFirstOrThrow();
  return row.id;
}
