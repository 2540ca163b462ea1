/**
 * The operator's override of an account's client API rate limit (`quota` requests per
 * `window_seconds`); both null: the service default (API_RATE_LIMIT_*). Both or neither.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table accounts
      add column rate_limit_quota integer check (rate_limit_quota between 1 and 1000000),
      add column rate_limit_window_seconds integer check (rate_limit_window_seconds between 1 and 3600),
      add constraint accounts_rate_limit_whole
        check ((rate_limit_quota is null) = (rate_limit_window_seconds is null))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table accounts
      drop constraint accounts_rate_limit_whole,
      drop column rate_limit_quota,
      drop column rate_limit_window_seconds
  `.execute(db);
}
