/** Users of client accounts and their API tokens (stored as SHA-256 only). */
import type { Insertable } from "kysely";
import type { Db } from "../db/database.ts";
import type { ApiTokensTable, UsersTable } from "./accounts.table.ts";

export function insertUser(db: Db, values: Insertable<UsersTable>) {
  return db.insertInto("users").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The user with this e-mail in any account: e-mails are unique case-insensitively across accounts. */
export function findUserByEmail(db: Db, email: string) {
  return db
    .selectFrom("users")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
    .executeTakeFirst();
}

export function findUserInAccount(db: Db, accountId: number, userId: number) {
  return db
    .selectFrom("users")
    .selectAll()
    .where("id", "=", userId)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
}

export function listUsersOfAccount(db: Db, accountId: number) {
  return db.selectFrom("users").selectAll().where("account_id", "=", accountId).orderBy("id").execute();
}

export function insertApiToken(db: Db, values: Insertable<ApiTokensTable>) {
  return db.insertInto("api_tokens").values(values).returningAll().executeTakeFirstOrThrow();
}

export function findApiTokenByHash(db: Db, userId: number, tokenSha256: Buffer) {
  return db
    .selectFrom("api_tokens")
    .selectAll()
    .where("user_id", "=", userId)
    .where("token_sha256", "=", tokenSha256)
    .executeTakeFirst();
}

export function listApiTokensOfUser(db: Db, userId: number) {
  return db.selectFrom("api_tokens").selectAll().where("user_id", "=", userId).orderBy("id").execute();
}

export function findApiTokenOfUser(db: Db, userId: number, tokenId: number) {
  return db
    .selectFrom("api_tokens")
    .selectAll()
    .where("id", "=", tokenId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
}

/** Revokes the token unless it already is; a second revocation keeps the first time. */
export function revokeApiToken(db: Db, tokenId: number) {
  return db
    .updateTable("api_tokens")
    .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.fn<Date>("now")) }))
    .where("id", "=", tokenId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
