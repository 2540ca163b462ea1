/**
 * Housekeeping removes published outbox events, published fleet changes and expired
 * idempotency records by age (src/housekeeping). BRIN indexes on the age columns let each of its
 * batches read only the oldest block ranges instead of the whole table: the rows are appended
 * in time order, and a BRIN entry per range of pages costs next to nothing to keep up to date.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index outbox_occurred_brin on outbox using brin (occurred_at);
    create index fleet_outbox_created_brin on fleet_outbox using brin (created_at);
    create index idempotency_keys_created_brin on idempotency_keys using brin (created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index outbox_occurred_brin, fleet_outbox_created_brin, idempotency_keys_created_brin`.execute(db);
}
