/** The messengers table. */
import type { Insertable, Updateable } from "kysely";
import type { Db } from "../../db/database.ts";
import type { MessengersTable } from "./messengers.table.ts";

export const findMessenger = (db: Db, id: number) =>
  db.selectFrom("messengers").selectAll().where("id", "=", id).executeTakeFirst();

/** The operator's messengers; the simulator's own are not listed. */
export const listMessengers = (db: Db, window: { offset: number; limit: number }) =>
  db
    .selectFrom("messengers")
    .selectAll()
    .where("simulated", "=", false)
    .orderBy("id")
    .offset(window.offset)
    .limit(window.limit)
    .execute();

export const insertMessenger = (db: Db, values: Insertable<MessengersTable>) =>
  db.insertInto("messengers").values(values).returningAll().executeTakeFirstOrThrow();

export const updateMessenger = (db: Db, id: number, values: Updateable<MessengersTable>) =>
  db.updateTable("messengers").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();

/** The first of the operator's messengers with this name, if any. */
export async function findMessengerIdByName(db: Db, name: string) {
  const row = await db
    .selectFrom("messengers")
    .select("id")
    .where("name", "=", name)
    .where("simulated", "=", false)
    .orderBy("id")
    .executeTakeFirst();
  return row?.id;
}
