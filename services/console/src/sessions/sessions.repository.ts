/** Queries of the sessions table: shop users' sessions and staff sessions. */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";

export function insertSession(
  db: Db,
  row: { token_sha256: Buffer; user_id: number; expires_at: Date; api_token_id: number; api_token_sealed: Buffer },
) {
  return db
    .insertInto("sessions")
    .values({ ...row, kind: "shop" })
    .returning(["id", "expires_at"])
    .executeTakeFirstOrThrow();
}

/**
 * The id the next session will have, taken ahead: a staff session's token is labelled with its
 * session's id in delivery-api (`console session <id>`), and is minted before the row exists.
 */
export async function reserveSessionId(db: Db): Promise<number> {
  const { rows } = await sql<{
    id: number;
  }>`select nextval(pg_get_serial_sequence('sessions', 'id')) as id`.execute(db);
  return (rows[0] as { id: number }).id;
}

export async function insertStaffSession(
  db: Db,
  row: {
    id: number;
    token_sha256: Buffer;
    staff_id: number;
    expires_at: Date;
    api_token_id: number;
    api_token_sealed: Buffer;
  },
) {
  // The reserved id: an identity column takes a given value only when told to.
  await sql`
    insert into sessions (id, token_sha256, kind, staff_id, expires_at, api_token_id, api_token_sealed)
    overriding system value
    values (${row.id}, ${row.token_sha256}, 'staff', ${row.staff_id}, ${row.expires_at}, ${row.api_token_id},
      ${row.api_token_sealed})
  `.execute(db);
}

/** The live shop session of this cookie with its user: not ended, not past its absolute nor idle expiry. */
export function findLiveSession(db: Db, tokenSha256: Buffer, idleMinutes: number) {
  return db
    .selectFrom("sessions")
    .innerJoin("users", "users.id", "sessions.user_id")
    .select([
      "sessions.id",
      "users.id as user_id",
      "sessions.last_seen_at",
      "sessions.api_token_sealed",
      "users.email",
      "users.account_id",
      "users.api_user_id",
    ])
    .where("sessions.token_sha256", "=", tokenSha256)
    .where("sessions.kind", "=", "shop")
    .where("sessions.ended_at", "is", null)
    .where("sessions.expires_at", ">", sql<Date>`now()`)
    .where("sessions.last_seen_at", ">", sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
    .executeTakeFirst();
}

/** The live staff session of this cookie with the person's e-mail. */
export function findLiveStaffSession(db: Db, tokenSha256: Buffer, idleMinutes: number) {
  return db
    .selectFrom("sessions")
    .innerJoin("staff_credentials", "staff_credentials.staff_id", "sessions.staff_id")
    .select([
      "sessions.id",
      "staff_credentials.staff_id",
      "staff_credentials.email",
      "sessions.last_seen_at",
      "sessions.api_token_sealed",
    ])
    .where("sessions.token_sha256", "=", tokenSha256)
    .where("sessions.kind", "=", "staff")
    .where("sessions.ended_at", "is", null)
    .where("sessions.expires_at", ">", sql<Date>`now()`)
    .where("sessions.last_seen_at", ">", sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
    .executeTakeFirst();
}

/** Which of these sessions are live (not ended, not past an expiry): a long-lived stream checks its own with it. */
export async function liveSessionIds(db: Db, ids: number[], idleMinutes: number): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom("sessions")
    .select("id")
    .where("id", "in", ids)
    .where("ended_at", "is", null)
    .where("expires_at", ">", sql<Date>`now()`)
    .where("last_seen_at", ">", sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
    .execute();
  return new Set(rows.map((row) => row.id));
}

export function touchSession(db: Db, sessionId: number) {
  return db.updateTable("sessions").set({ last_seen_at: sql<Date>`now()` }).where("id", "=", sessionId).execute();
}

/** Ends one session (by its id), every session of a shop user (user_id) or of a staff person (staff_id). */
export function endSessions(db: Db, by: "id" | "user_id" | "staff_id", value: number) {
  return db
    .updateTable("sessions")
    .set({ ended_at: sql<Date>`now()` })
    .where(by, "=", value)
    .where("ended_at", "is", null)
    .execute();
}

export function endSessionByCookie(db: Db, tokenSha256: Buffer) {
  return db
    .updateTable("sessions")
    .set({ ended_at: sql<Date>`now()` })
    .where("token_sha256", "=", tokenSha256)
    .where("ended_at", "is", null)
    .execute();
}

/**
 * Sessions that are over (ended, or past an expiry) whose token is still to be revoked, with
 * what revoking it takes: the shop user's account and user ids, or the staff id.
 */
export function listOverSessions(db: Db, idleMinutes: number, limit: number) {
  return db
    .selectFrom("sessions")
    .leftJoin("users", "users.id", "sessions.user_id")
    .select([
      "sessions.id",
      "sessions.kind",
      "sessions.api_token_id",
      "sessions.staff_id",
      "users.account_id",
      "users.api_user_id",
    ])
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

/** Ids of the staff tokens the person's console sessions call with: the console's, not personal tokens. */
export async function staffSessionTokenIds(db: Db, staffId: number): Promise<number[]> {
  const rows = await db.selectFrom("sessions").select("api_token_id").where("staff_id", "=", staffId).execute();
  return rows.map((row) => row.api_token_id);
}

/** Ends the person's oldest live sessions beyond the `keep` most recent. */
export function endSessionsBeyond(db: Db, by: "user_id" | "staff_id", id: number, keep: number) {
  return db
    .updateTable("sessions")
    .set({ ended_at: sql<Date>`now()` })
    .where(by, "=", id)
    .where("ended_at", "is", null)
    .where(
      "id",
      "not in",
      db
        .selectFrom("sessions")
        .select("id")
        .where(by, "=", id)
        .where("ended_at", "is", null)
        .orderBy("id", "desc")
        .limit(keep),
    )
    .execute();
}
