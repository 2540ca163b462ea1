/**
 * The delivery schema: client accounts and their catalogue (users, API tokens, default place,
 * saved addresses, package types, delivery zones), deliveries with their tasks and packages,
 * the outbox of delivery events, and idempotency records.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table accounts (
      id bigint generated always as identity primary key,
      company_name text not null,
      environment text not null default 'production' check (environment in ('production', 'test')),
      bring_back_containers boolean not null default false,
      -- The slot of the task at the default place: it ends (pickup) or starts (dropoff)
      -- default_task_gap_minutes before or after the client's task, and lasts
      -- default_task_duration_minutes.
      default_task_gap_minutes integer not null default 0 check (default_task_gap_minutes >= 0),
      default_task_duration_minutes integer not null default 60 check (default_task_duration_minutes > 0),
      -- Particular cases agreed with the operator: recipient phone not required.
      recipient_phone_optional boolean not null default false,
      phone_default_region text not null default 'FR',
      created_at timestamptz not null default now()
    );

    create table users (
      id bigint generated always as identity primary key,
      account_id bigint not null references accounts (id),
      email text not null,
      name text,
      created_at timestamptz not null default now()
    );
    create unique index users_email_key on users (lower(email));

    -- Tokens are stored as their SHA-256; the token itself is shown once, at creation.
    create table api_tokens (
      id bigint generated always as identity primary key,
      user_id bigint not null references users (id),
      token_sha256 bytea not null unique,
      token_hint text not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz
    );
    create index api_tokens_user_idx on api_tokens (user_id) where revoked_at is null;

    -- Places of an account: its default place (one) and its saved addresses (the integers a task
    -- may be given as).
    create table places (
      id bigint generated always as identity primary key,
      account_id bigint not null references accounts (id),
      kind text not null check (kind in ('default', 'saved')),
      label text,
      recipient_name text not null,
      recipient_phone text,
      recipient_email text,
      company_name text,
      address text not null,
      postal_code text not null,
      city text not null,
      address_instructions text,
      latitude double precision,
      longitude double precision,
      created_at timestamptz not null default now()
    );
    create unique index places_one_default_per_account on places (account_id) where kind = 'default';
    create index places_account_idx on places (account_id);

    create table package_types (
      id bigint generated always as identity primary key,
      account_id bigint not null references accounts (id),
      name text not null,
      volume_dm3 numeric not null check (volume_dm3 >= 0),
      weight_kg numeric not null check (weight_kg >= 0),
      fragility text,
      temperature text,
      -- A size category (S, M, L...): given alone, with amount 1.
      is_size_category boolean not null default false,
      archived_at timestamptz,
      created_at timestamptz not null default now(),
      unique (account_id, name)
    );

    create table delivery_zones (
      id bigint generated always as identity primary key,
      account_id bigint not null references accounts (id),
      postal_code text not null,
      latitude double precision not null,
      longitude double precision not null,
      unique (account_id, postal_code)
    );

    create table deliveries (
      id bigint generated always as identity primary key,
      account_id bigint not null references accounts (id),
      status text not null default 'saved'
        check (status in ('saved', 'scheduled', 'picked_up', 'delivered', 'cancelled', 'failed')),
      direction text not null check (direction in ('outbound', 'inbound', 'other')),
      comments text,
      client_order_reference text,
      sender_display_name text,
      bring_back_containers boolean not null,
      price_cents integer,
      price_tariff_id bigint,
      price_lines jsonb not null default '[]',
      original_delivery_id bigint references deliveries (id),
      redelivery_id bigint references deliveries (id),
      -- The sequence of the last event of this delivery; the next event takes event_sequence + 1.
      event_sequence integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index deliveries_account_created_idx on deliveries (account_id, id desc);
    create index deliveries_account_reference_idx on deliveries (account_id, client_order_reference, id desc)
      where client_order_reference is not null;

    -- A task keeps a copy of its place: editing a saved address later does not move a delivery.
    create table tasks (
      id bigint generated always as identity primary key,
      delivery_id bigint not null references deliveries (id),
      kind text not null check (kind in ('pickup', 'dropoff')),
      at_default_place boolean not null default false,
      saved_address_id bigint references places (id),
      slot_starting_at timestamptz not null,
      slot_ending_at timestamptz not null check (slot_ending_at > slot_starting_at),
      recipient_name text not null,
      recipient_phone text,
      recipient_email text,
      company_name text,
      address text not null,
      postal_code text not null,
      city text not null,
      address_instructions text,
      latitude double precision,
      longitude double precision,
      tracking_token text unique,
      eta timestamptz,
      started_at timestamptz,
      completed_at timestamptz,
      failure_reason text,
      notes text,
      signature_url text,
      accepted_by text,
      completion_pictures text[] not null default '{}',
      completion_text text,
      unique (delivery_id, kind)
    );

    create table delivery_packages (
      id bigint generated always as identity primary key,
      delivery_id bigint not null references deliveries (id),
      position integer not null,
      package_type_id bigint references package_types (id),
      type text not null,
      name text not null,
      amount integer not null check (amount > 0),
      volume_dm3 numeric not null,
      weight_kg numeric not null,
      fragility text,
      temperature text,
      client_reference text,
      unique (delivery_id, position)
    );

    -- Every delivery change, written in the transaction of the change and published by the
    -- relay with id as Nats-Msg-Id.
    create table outbox (
      id uuid primary key,
      account_id bigint not null,
      delivery_id bigint not null,
      sequence integer not null,
      type text not null,
      subject text not null,
      payload jsonb not null,
      occurred_at timestamptz not null default now(),
      published_at timestamptz,
      unique (delivery_id, sequence)
    );
    create index outbox_unpublished_idx on outbox (occurred_at) where published_at is null;

    -- A retried POST with the same Idempotency-Key and body gets the first response back.
    create table idempotency_keys (
      account_id bigint not null references accounts (id),
      operation text not null,
      key text not null,
      request_sha256 bytea not null,
      response_status integer not null,
      response_body jsonb not null,
      created_at timestamptz not null default now(),
      primary key (account_id, operation, key)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table idempotency_keys, outbox, delivery_packages, tasks, deliveries, delivery_zones,
      package_types, places, api_tokens, users, accounts cascade
  `.execute(db);
}
