/**
 * The outbox keeps each event as the JSON text it publishes (`event`), so receivers get its
 * fields in the documented order (id, type, occurred_at, ..., payload) and the delivery's in the
 * order the API answers them; `jsonb` reordered them by key length. Rows written before keep
 * `payload` (jsonb) and are published from it until housekeeping removes them. Adding a
 * nullable column and dropping a NOT NULL rewrite nothing: the migration takes no time on a
 * large outbox.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table outbox add column event text;
    alter table outbox alter column payload drop not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    update outbox set payload = event::jsonb where payload is null;
    alter table outbox alter column payload set not null;
    alter table outbox drop column event;
  `.execute(db);
}
