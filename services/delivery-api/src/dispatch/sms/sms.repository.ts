/** The `sms_messages` outbox table. */
import { type Insertable, sql, type Updateable } from "kysely";
import type { Db } from "../../db/database.ts";
import type { SmsMessagesTable } from "./sms.table.ts";

/** Records a task's SMS once: a second one for the same task is ignored. */
export async function insertSmsOnce(db: Db, values: Insertable<SmsMessagesTable>) {
  await db
    .insertInto("sms_messages")
    .values(values)
    .onConflict((oc) => oc.column("task_id").doNothing())
    .execute();
}

/**
 * The oldest due pending SMS, locked. SKIP LOCKED: replicas share the queue, and a message is
 * sent by one of them only.
 */
export function claimDueSms(db: Db) {
  return db
    .selectFrom("sms_messages")
    .selectAll()
    .where("status", "=", "pending")
    .where("next_attempt_at", "<=", sql<Date>`now()`)
    .orderBy("id")
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

export async function updateSms(db: Db, id: number, values: Updateable<SmsMessagesTable>) {
  await db.updateTable("sms_messages").set(values).where("id", "=", id).execute();
}
