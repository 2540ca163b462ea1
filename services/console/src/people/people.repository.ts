/** Queries of the people tables. */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { LinkPurpose } from "./people.table.ts";

export function findUserByEmail(db: Db, email: string) {
  return db
    .selectFrom("users")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
    .executeTakeFirst();
}

export function findUser(db: Db, userId: number) {
  return db.selectFrom("users").selectAll().where("id", "=", userId).executeTakeFirst();
}

/** The console's row of a delivery-api user, created on first invitation, its e-mail kept current. */
export function upsertUser(db: Db, user: { api_user_id: number; account_id: number; email: string }) {
  return db
    .insertInto("users")
    .values(user)
    .onConflict((oc) => oc.column("api_user_id").doUpdateSet({ email: user.email, account_id: user.account_id }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function setPassword(db: Db, userId: number, passwordHash: string) {
  return db
    .updateTable("users")
    .set({ password_hash: passwordHash, password_changed_at: new Date() })
    .where("id", "=", userId)
    .execute();
}

export function insertLink(
  db: Db,
  link: { user_id: number; purpose: LinkPurpose; token_sha256: Buffer; expires_at: Date },
) {
  return db.insertInto("one_time_links").values(link).returning(["id", "expires_at"]).executeTakeFirstOrThrow();
}

/**
 * Marks the link used, once: of two requests using the same link at the same time, one gets
 * the row and the other nothing. An expired or used link is nothing too.
 */
export function consumeLink(db: Db, purpose: LinkPurpose, tokenSha256: Buffer) {
  return db
    .updateTable("one_time_links")
    .set({ used_at: sql<Date>`now()` })
    .where("token_sha256", "=", tokenSha256)
    .where("purpose", "=", purpose)
    .where("used_at", "is", null)
    .where("expires_at", ">", sql<Date>`now()`)
    .returning(["user_id"])
    .executeTakeFirst();
}

/** Older links of the same purpose stop working when a new one is sent. */
export function retireLinks(db: Db, userId: number, purpose: LinkPurpose) {
  return db
    .updateTable("one_time_links")
    .set({ used_at: sql<Date>`now()` })
    .where("user_id", "=", userId)
    .where("purpose", "=", purpose)
    .where("used_at", "is", null)
    .execute();
}

export async function countRecentFailures(db: Db, key: string, windowSeconds: number): Promise<number> {
  const row = await db
    .selectFrom("sign_in_failures")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("key", "=", key)
    .where("failed_at", ">", sql<Date>`now() - make_interval(secs => ${windowSeconds})`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function recordFailures(db: Db, keys: string[]) {
  return db
    .insertInto("sign_in_failures")
    .values(keys.map((key) => ({ key })))
    .execute();
}

/** Failures older than the window count for nothing: the sweep deletes them. */
export function deleteOldFailures(db: Db, windowSeconds: number) {
  return db
    .deleteFrom("sign_in_failures")
    .where("failed_at", "<", sql<Date>`now() - make_interval(secs => ${windowSeconds})`)
    .execute();
}

/** Links expired or used a day ago are of no use to anyone. */
export function deleteOldLinks(db: Db) {
  return db
    .deleteFrom("one_time_links")
    .where((eb) =>
      eb.or([
        eb("expires_at", "<", sql<Date>`now() - interval '1 day'`),
        eb("used_at", "<", sql<Date>`now() - interval '1 day'`),
      ]),
    )
    .execute();
}
