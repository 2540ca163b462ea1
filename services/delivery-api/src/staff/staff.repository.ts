/** The operator's staff and their tokens (stored as SHA-256 only). */
import { type Insertable, sql, type Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import type { StaffTable, StaffTokensTable } from "./staff.table.ts";

export function insertStaff(db: Db, values: Insertable<StaffTable>) {
  return db.insertInto("staff").values(values).returningAll().executeTakeFirstOrThrow();
}

export function findStaffById(db: Db, id: number) {
  return db.selectFrom("staff").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Locks the person's row: a disable and a token creation for the same person do not interleave. */
export function lockStaffById(db: Db, id: number) {
  return db.selectFrom("staff").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

export function findStaffByEmail(db: Db, emailLower: string) {
  return db.selectFrom("staff").selectAll().where("email", "=", emailLower).executeTakeFirst();
}

/** One page of staff, by id; one row more than asked tells whether another page follows. */
export function listStaff(db: Db, filter: { emailLower?: string | undefined; offset: number; limit: number }) {
  let query = db.selectFrom("staff").selectAll();
  if (filter.emailLower !== undefined) query = query.where("email", "=", filter.emailLower);
  return query.orderBy("id").offset(filter.offset).limit(filter.limit).execute();
}

export function updateStaff(db: Db, id: number, values: Updateable<StaffTable>) {
  return db.updateTable("staff").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

export function insertStaffToken(db: Db, values: Insertable<StaffTokensTable>) {
  return db.insertInto("staff_tokens").values(values).returningAll().executeTakeFirstOrThrow();
}

/** A token is live while it is neither revoked nor expired. */
const live = sql<boolean>`revoked_at is null and (expires_at is null or expires_at > now())`;

/** How many live tokens the person holds, counted up to `atMost`. */
export async function countLiveStaffTokens(db: Db, staffId: number, atMost: number): Promise<number> {
  const { count } = await db
    .selectFrom(
      db.selectFrom("staff_tokens").select("id").where("staff_id", "=", staffId).where(live).limit(atMost).as("held"),
    )
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** One page of a person's live tokens, by id. */
export function listLiveStaffTokens(db: Db, staffId: number, offset: number, limit: number) {
  return db
    .selectFrom("staff_tokens")
    .selectAll()
    .where("staff_id", "=", staffId)
    .where(live)
    .orderBy("id")
    .offset(offset)
    .limit(limit)
    .execute();
}

export function findLiveStaffToken(db: Db, staffId: number, tokenId: number) {
  return db
    .selectFrom("staff_tokens")
    .selectAll()
    .where("id", "=", tokenId)
    .where("staff_id", "=", staffId)
    .where(live)
    .executeTakeFirst();
}

export function revokeStaffToken(db: Db, tokenId: number) {
  return db
    .updateTable("staff_tokens")
    .set({ revoked_at: sql<Date>`now()` })
    .where("id", "=", tokenId)
    .where("revoked_at", "is", null)
    .execute();
}

/** Revokes every token of a person (when the person is disabled); how many were live. */
export async function revokeAllStaffTokens(db: Db, staffId: number) {
  const result = await db
    .updateTable("staff_tokens")
    .set({ revoked_at: sql<Date>`now()` })
    .where("staff_id", "=", staffId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The live token with this hash and its enabled holder: what an operator API request presents.
 * A disabled person, a revoked or an expired token is no match.
 */
export function findActiveStaffLogin(db: Db, tokenSha256: Buffer) {
  return db
    .selectFrom("staff_tokens")
    .innerJoin("staff", "staff.id", "staff_tokens.staff_id")
    .where("staff_tokens.token_sha256", "=", tokenSha256)
    .where("staff_tokens.revoked_at", "is", null)
    .where((eb) =>
      eb.or([eb("staff_tokens.expires_at", "is", null), eb("staff_tokens.expires_at", ">", sql<Date>`now()`)]),
    )
    .where("staff.disabled", "=", false)
    .select([
      "staff_tokens.id as token_id",
      "staff_tokens.token_sha256",
      "staff_tokens.expires_at",
      "staff.id as staff_id",
      "staff.email",
      "staff.name",
      "staff.role",
    ])
    .executeTakeFirst();
}

/** Records a token's use, at most once a minute (as for API tokens). */
export function touchStaffTokenUse(db: Db, tokenId: number) {
  return db
    .updateTable("staff_tokens")
    .set({ last_used_at: sql<Date>`now()` })
    .where("id", "=", tokenId)
    .where((eb) =>
      eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", sql<Date>`now() - interval '1 minute'`)]),
    )
    .execute();
}

/** Live tokens of enabled people created after `afterId` (at most `limit`, oldest first). */
export function listActiveStaffTokensAfter(db: Db, afterId: number, limit: number) {
  return db
    .selectFrom("staff_tokens")
    .innerJoin("staff", "staff.id", "staff_tokens.staff_id")
    .select(["staff_tokens.id", "staff_tokens.token_sha256"])
    .where("staff_tokens.id", ">", afterId)
    .where("staff_tokens.revoked_at", "is", null)
    .where((eb) =>
      eb.or([eb("staff_tokens.expires_at", "is", null), eb("staff_tokens.expires_at", ">", sql<Date>`now()`)]),
    )
    .where("staff.disabled", "=", false)
    .orderBy("staff_tokens.id")
    .limit(limit)
    .execute();
}
