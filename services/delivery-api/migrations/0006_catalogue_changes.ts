/**
 * Every change to what a create reads from an account's catalogue (places, delivery zones,
 * package types) notifies `delivery_catalogue`, whoever makes it (the operator API, the demo
 * seed, a hand-written statement): each replica drops its cached catalogue entries when the
 * notification arrives (src/deliveries/catalogue-cache.ts). One notification per statement.
 */
import { type Kysely, sql } from "kysely";

const TABLES = ["places", "delivery_zones", "package_types"];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function notify_catalogue_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('delivery_catalogue', '');
      return null;
    end
    $$
  `.execute(db);
  for (const table of TABLES) {
    await sql`
      create trigger ${sql.raw(`${table}_catalogue_change`)}
      after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function notify_catalogue_change()
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await sql`drop trigger ${sql.raw(`${table}_catalogue_change`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function notify_catalogue_change()`.execute(db);
}
