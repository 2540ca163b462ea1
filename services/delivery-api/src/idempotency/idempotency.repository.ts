/** The `idempotency_keys` table: a key lives 24 hours. */
import { type Insertable, sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { IdempotencyKeysTable } from "./idempotency.table.ts";

/** How long a key is remembered; housekeeping deletes older records. */
export const IDEMPOTENCY_RETENTION = sql`interval '24 hours'`;

/** The live record of an account's key for an operation, if any. */
export function findLiveKey(db: Db, key: { accountId: number; operation: string; key: string }) {
  return db
    .selectFrom("idempotency_keys")
    .select(["request_sha256", "response_status", "response_body"])
    .where("account_id", "=", key.accountId)
    .where("operation", "=", key.operation)
    .where("key", "=", key.key)
    .where("created_at", ">", sql<Date>`now() - ${IDEMPOTENCY_RETENTION}`)
    .executeTakeFirst();
}

/** Stores a key's record, replacing an expired one; false when a live record holds the key. */
export async function insertKeyUnlessLive(db: Db, values: Insertable<IdempotencyKeysTable>): Promise<boolean> {
  const stored = await db
    .insertInto("idempotency_keys")
    .values(values)
    .onConflict((oc) =>
      oc
        .columns(["account_id", "operation", "key"])
        .doUpdateSet({ ...values, created_at: sql<Date>`now()` })
        .where("idempotency_keys.created_at", "<=", sql<Date>`now() - ${IDEMPOTENCY_RETENTION}`),
    )
    .returning("key")
    .executeTakeFirst();
  return stored !== undefined;
}
