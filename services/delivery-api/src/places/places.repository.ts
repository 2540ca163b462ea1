/** The default place and the saved addresses of an account (one table, told apart by `kind`). */
import type { Insertable, Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import type { PlacesTable } from "./places.table.ts";

export type PlaceColumns = Omit<Insertable<PlacesTable>, "id" | "account_id" | "kind" | "created_at">;

export function findDefaultPlace(db: Db, accountId: number) {
  return db
    .selectFrom("places")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("kind", "=", "default")
    .executeTakeFirst();
}

/** Creates or replaces the account's one default place (keeping its id). */
export function upsertDefaultPlace(db: Db, accountId: number, values: PlaceColumns) {
  return db
    .insertInto("places")
    .values({ ...values, account_id: accountId, kind: "default" })
    .onConflict((oc) => oc.column("account_id").where("kind", "=", "default").doUpdateSet(values))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A saved address of the account: what a task given as an integer refers to. */
export function findSavedAddress(db: Db, accountId: number, id: number) {
  return db
    .selectFrom("places")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .where("kind", "=", "saved")
    .executeTakeFirst();
}

export function listSavedAddresses(db: Db, accountId: number) {
  return db
    .selectFrom("places")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("kind", "=", "saved")
    .orderBy("id")
    .execute();
}

export function insertSavedAddress(db: Db, accountId: number, values: PlaceColumns) {
  return db
    .insertInto("places")
    .values({ ...values, account_id: accountId, kind: "saved" })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateSavedAddress(db: Db, id: number, values: Updateable<PlacesTable>) {
  return db.updateTable("places").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Deletes a saved address. Tasks made from it keep their own copy of the place, so their link
 * to it is only provenance: it is cleared rather than letting the deletion fail.
 */
export async function deleteSavedAddress(db: Db, id: number) {
  await db.updateTable("tasks").set({ saved_address_id: null }).where("saved_address_id", "=", id).execute();
  await db.deleteFrom("places").where("id", "=", id).where("kind", "=", "saved").execute();
}
