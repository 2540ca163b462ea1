/** Accounts and their settings. */
import type { Insertable, Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import type { AccountsTable } from "./accounts.table.ts";

export function insertAccount(db: Db, values: Insertable<AccountsTable>) {
  return db.insertInto("accounts").values(values).returningAll().executeTakeFirstOrThrow();
}

export function findAccountById(db: Db, id: number) {
  return db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Locks the account row, so settings changes and the checks made on them do not interleave. */
export function lockAccountById(db: Db, id: number) {
  return db.selectFrom("accounts").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

/** One page of accounts, oldest first; one row more than asked tells whether another page exists. */
export function listAccounts(db: Db, filter: { environment?: "production" | "test"; offset: number; limit: number }) {
  let query = db.selectFrom("accounts").selectAll();
  if (filter.environment) query = query.where("environment", "=", filter.environment);
  return query.orderBy("id").offset(filter.offset).limit(filter.limit).execute();
}

export function updateAccount(db: Db, id: number, values: Updateable<AccountsTable>) {
  return db.updateTable("accounts").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

/** The account whose user has this e-mail (compared case-insensitively), if any. */
export function findAccountByUserEmail(db: Db, email: string) {
  return db
    .selectFrom("accounts")
    .innerJoin("users", "users.account_id", "accounts.id")
    .where((eb) => eb(eb.fn("lower", ["users.email"]), "=", email.toLowerCase()))
    .selectAll("accounts")
    .select("users.id as user_id")
    .executeTakeFirst();
}
