/** The vehicles table. */
import type { Insertable, Updateable } from "kysely";
import type { Db } from "../../db/database.ts";
import type { VehiclesTable } from "./vehicles.table.ts";

/** A vehicle with the id of its active round, if any. */
export const findVehicle = (db: Db, id: number) =>
  db
    .selectFrom("vehicles as v")
    .leftJoin("rounds as r", (join) => join.onRef("r.vehicle_id", "=", "v.id").on("r.status", "=", "active"))
    .selectAll("v")
    .select("r.id as active_round_id")
    .where("v.id", "=", id)
    .executeTakeFirst();

export const listVehicleIds = async (db: Db) =>
  (await db.selectFrom("vehicles").select("id").orderBy("id").execute()).map((row) => row.id);

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
