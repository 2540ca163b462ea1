/**
 * Housekeeping deletes audit entries older than API_AUDIT_RETENTION_DAYS, oldest first, in
 * batches. The entries are appended in time order, so a BRIN index on `at` (a few pages for
 * millions of rows) finds the old ones without reading the recent block ranges.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index audit_log_at_brin on audit_log using brin (at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audit_log_at_brin`.execute(db);
}
