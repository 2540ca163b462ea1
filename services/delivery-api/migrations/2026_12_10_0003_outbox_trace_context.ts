/**
 * The trace context of the change that wrote an outbox event, so the relay (running later, in
 * another transaction) publishes the event as part of the same trace. Nullable, no default:
 * adding it rewrites nothing.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table outbox add column traceparent text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table outbox drop column traceparent`.execute(db);
}
