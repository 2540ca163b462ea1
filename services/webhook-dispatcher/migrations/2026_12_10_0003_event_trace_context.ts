/**
 * The trace context an event arrived with (in its NATS headers), so every POST of it, however
 * much later, continues the trace of the request that caused it. Nullable, no default: adding
 * it rewrites nothing.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column traceparent text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events drop column traceparent`.execute(db);
}
