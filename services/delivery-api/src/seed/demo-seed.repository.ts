import { sql } from "kysely";
import type { Db } from "../db/database.ts";

// Serialises concurrent seeds (two `npm start` at once) without a table of our own.
const SEED_LOCK_KEY = 0x64656d6f; // "demo"

/** Waits for any other seed to commit; held until the transaction ends. */
export async function lockSeed(trx: Db) {
  await sql`select pg_advisory_xact_lock(${SEED_LOCK_KEY})`.execute(trx);
}
