/** Queries of the sessions table. */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";

export function insertSession(
  db: Db,
  row: { token_sha256: Buffer; user_id: number; expires_at: Date; api_token_id: number; api_token_sealed: Buffer },
) {
  return db.insertInto("sessions").values(row).returning(["id", "expires_at"]).executeTakeFirstOrThrow();
}

/** The live session of this cookie with its user: not ended, not past its absolute nor idle expiry. */
export function findLiveSession(db: Db, tokenSha256: Buffer, idleMinutes: number) {
  return db
    .selectFrom("sessions")
    .innerJoin("users", "users.id", "sessions.user_id")
    .select([
      "sessions.id",
      "sessions.user_id",
      "sessions.last_seen_at",
      "sessions.api_token_sealed",
      "users.email",
      "users.account_id",
      "users.api_user_id",
    ])
    .where("sessions.token_sha256", "=", tokenSha256)
    .where("sessions.ended_at", "is", null)
    .where("sessions.expires_at", ">", sql<Date>`now()`)
    .where("sessions.last_seen_at", ">", sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
    .executeTakeFirst();
}

export function touchSession(db: Db, sessionId: number) {
  return db.updateTable("sessions").set({ last_seen_at: sql<Date>`now()` }).where("id", "=", sessionId).execute();
}

/** Ends one session (by its id) or every session of a user (by user_id). */
export function endSessions(db: Db, by: "id" | "user_id", value: number) {
  return db
    .updateTable("sessions")
    .set({ ended_at: sql<Date>`now()` })
    .where(by, "=", value)
    .where("ended_at", "is", null)
    .execute();
}

/** Sessions that are over (ended, or past an expiry) whose API token is still to be revoked. */
export function listOverSessions(db: Db, idleMinutes: number, limit: number) {
  return db
    .selectFrom("sessions")
    .innerJoin("users", "users.id", "sessions.user_id")
    .select(["sessions.id", "sessions.api_token_id", "users.account_id", "users.api_user_id"])
    .where((eb) =>
      eb.or([
        eb("sessions.ended_at", "is not", null),
        eb("sessions.expires_at", "<=", sql<Date>`now()`),
        eb("sessions.last_seen_at", "<=", sql<Date>`now() - make_interval(mins => ${idleMinutes})`),
      ]),
    )
    .orderBy("sessions.id")
    .limit(limit)
    .execute();
}

export function deleteSession(db: Db, sessionId: number) {
  return db.deleteFrom("sessions").where("id", "=", sessionId).execute();
}

/** Ids of the API tokens the user's live sessions call with: the console's own, not the user's. */
export async function sessionTokenIds(db: Db, userId: number): Promise<number[]> {
  const rows = await db.selectFrom("sessions").select("api_token_id").where("user_id", "=", userId).execute();
  return rows.map((row) => row.api_token_id);
}

/** Ends the user's oldest live sessions beyond the `keep` most recent. */
export function endSessionsBeyond(db: Db, userId: number, keep: number) {
  return db
    .updateTable("sessions")
    .set({ ended_at: sql<Date>`now()` })
    .where("user_id", "=", userId)
    .where("ended_at", "is", null)
    .where(
      "id",
      "not in",
      db
        .selectFrom("sessions")
        .select("id")
        .where("user_id", "=", userId)
        .where("ended_at", "is", null)
        .orderBy("id", "desc")
        .limit(keep),
    )
    .execute();
}
