/** Delivery zones: the postal codes an account may send tasks to, each with a centroid. */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";

export interface ZoneValues {
  postal_code: string;
  latitude: number;
  longitude: number;
}

export function findZone(db: Db, accountId: number, postalCode: string) {
  return db
    .selectFrom("delivery_zones")
    .select(["postal_code", "latitude", "longitude"])
    .where("account_id", "=", accountId)
    .where("postal_code", "=", postalCode)
    .executeTakeFirst();
}

export function listZones(db: Db, accountId: number) {
  return db
    .selectFrom("delivery_zones")
    .select(["postal_code", "latitude", "longitude"])
    .where("account_id", "=", accountId)
    .orderBy("postal_code")
    .execute();
}

/** Adds the zones, replacing the centroid of those already there. */
export async function upsertZones(db: Db, accountId: number, zones: ZoneValues[]) {
  if (zones.length === 0) return;
  await db
    .insertInto("delivery_zones")
    .values(zones.map((zone) => ({ ...zone, account_id: accountId })))
    .onConflict((oc) =>
      oc.columns(["account_id", "postal_code"]).doUpdateSet((eb) => ({
        latitude: eb.ref("excluded.latitude"),
        longitude: eb.ref("excluded.longitude"),
      })),
    )
    .execute();
}

/** Adds the zones not there yet and leaves the others as they are. */
export async function insertMissingZones(db: Db, accountId: number, zones: ZoneValues[]) {
  if (zones.length === 0) return;
  await db
    .insertInto("delivery_zones")
    .values(zones.map((zone) => ({ ...zone, account_id: accountId })))
    .onConflict((oc) => oc.columns(["account_id", "postal_code"]).doNothing())
    .execute();
}

/** Removes every zone of the account not in `keep` (all of them when `keep` is empty). */
export async function deleteZonesExcept(db: Db, accountId: number, keep: string[]) {
  let query = db.deleteFrom("delivery_zones").where("account_id", "=", accountId);
  if (keep.length > 0) query = query.where("postal_code", "not in", keep);
  await query.execute();
}

/** Removes the given postal codes; returns those that were there. */
export async function deleteZones(db: Db, accountId: number, postalCodes: string[]) {
  const rows = await db
    .deleteFrom("delivery_zones")
    .where("account_id", "=", accountId)
    .where("postal_code", "in", postalCodes)
    .returning("postal_code")
    .execute();
  return rows.map((row) => row.postal_code);
}

/**
 * A task's coordinates, as every map and ETA reads them: the place's own when the operator set
 * them, else its zone's centroid. For a query with the task as `t` and its zone left-joined as `z`.
 */
/** What a join builder offers `onTaskZone`: the references it compares. */
interface TaskZoneJoin<J> {
  onRef(lhs: "z.account_id" | "z.postal_code", op: "=", rhs: "d.account_id" | "t.postal_code"): J;
}

/**
 * The task's zone, for `leftJoin("delivery_zones as z", onTaskZone)` in a query with the task as
 * `t` and its delivery as `d`: the join that `taskCoordinates` reads its centroid from.
 */
export const onTaskZone = <J extends TaskZoneJoin<J>>(join: J): J =>
  join.onRef("z.account_id", "=", "d.account_id").onRef("z.postal_code", "=", "t.postal_code");

export const taskCoordinates = [
  sql<number | null>`coalesce(t.latitude, z.latitude)`.as("latitude"),
  sql<number | null>`coalesce(t.longitude, z.longitude)`.as("longitude"),
] as const;
