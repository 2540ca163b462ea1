/**
 * When each API token was last used, for the console's token list: written when a request's
 * token is looked up in the database (a cache miss), at most once a minute per token, so the
 * time is right to the minute plus API_AUTH_CACHE_MS.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_tokens add column last_used_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_tokens drop column last_used_at`.execute(db);
}
