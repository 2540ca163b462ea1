/**
 * The pricing schema: tariff versions per account. A version is never updated nor deleted: a
 * newer effective_from supersedes it, so the tariff in force at any past moment stays known.
 * Bands and thresholds are small ordered lists always read whole, hence jsonb.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table tariffs (
      id bigint generated always as identity primary key,
      -- delivery-api's account id; pricing owns no accounts, only their tariffs.
      account_id bigint not null check (account_id > 0),
      effective_from timestamptz not null,
      base_outbound_cents integer not null check (base_outbound_cents >= 0),
      base_inbound_cents integer not null check (base_inbound_cents >= 0),
      base_other_cents integer not null check (base_other_cents >= 0),
      per_package_cents integer not null default 0 check (per_package_cents >= 0),
      weight_bands jsonb not null default '[]' check (jsonb_typeof(weight_bands) = 'array'),
      volume_bands jsonb not null default '[]' check (jsonb_typeof(volume_bands) = 'array'),
      slot_surcharges jsonb not null default '[]' check (jsonb_typeof(slot_surcharges) = 'array'),
      lead_time_surcharges jsonb not null default '[]' check (jsonb_typeof(lead_time_surcharges) = 'array'),
      minimum_cents integer not null default 0 check (minimum_cents >= 0),
      note text,
      created_at timestamptz not null default now(),
      -- Two versions starting at the same instant would make the tariff in force ambiguous.
      unique (account_id, effective_from)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table tariffs`.execute(db);
}
