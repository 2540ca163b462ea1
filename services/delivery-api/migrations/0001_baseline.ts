/**
 * The delivery schema: client accounts and their catalogue (users, API tokens, default place,
 * saved addresses, package types, delivery zones), deliveries with their tasks and packages,
 * the outbox of delivery events, and idempotency records; then dispatch and tracking:
 * messengers, vehicles, rounds and their ordered tasks, the latest positions of each round,
 * uploaded proof images, the SMS outbox, the fleet outbox (FLEET KV bucket) and the
 * test-environment courier simulator.
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
      -- The operator's override of the client API rate limit (quota requests per window);
      -- both null: the service default (API_RATE_LIMIT_*).
      rate_limit_quota integer check (rate_limit_quota between 1 and 1000000),
      rate_limit_window_seconds integer check (rate_limit_window_seconds between 1 and 3600),
      created_at timestamptz not null default now(),
      constraint accounts_rate_limit_whole check ((rate_limit_quota is null) = (rate_limit_window_seconds is null))
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
      -- The event as jsonb: no longer written (event replaced it); the relay still reads it when
      -- event is null (src/outbox/outbox.repository.ts).
      payload jsonb,
      occurred_at timestamptz not null default now(),
      published_at timestamptz,
      -- The trace context of the change that wrote the event, so the relay (running later, in
      -- another transaction) publishes it as part of the same trace.
      traceparent text,
      -- The event as the JSON text published, so receivers get its fields in the documented
      -- order (id, type, occurred_at, ..., payload); jsonb would reorder them by key length.
      event text,
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

    -- Housekeeping removes published outbox events, published fleet changes and expired
    -- idempotency records by age (src/housekeeping). Rows are appended in time order, so a BRIN
    -- index lets each batch read only the oldest block ranges, for next to nothing to maintain.
    create index outbox_occurred_brin on outbox using brin (occurred_at);
    create index idempotency_keys_created_brin on idempotency_keys using brin (created_at);

    create table messengers (
      id bigint generated always as identity primary key,
      name text not null,
      phone text,
      -- The test-environment courier: its rounds may run side by side.
      simulated boolean not null default false,
      created_at timestamptz not null default now()
    );

    create table vehicles (
      id bigint generated always as identity primary key,
      external_id text not null unique,
      provider text not null,
      label text,
      -- SHA-256 (hex) of the provider token; the token itself is never stored.
      provider_token_sha256 text,
      created_at timestamptz not null default now()
    );

    create table rounds (
      id bigint generated always as identity primary key,
      messenger_id bigint not null references messengers (id),
      vehicle_id bigint references vehicles (id),
      status text not null default 'planned' check (status in ('planned', 'active', 'ended')),
      simulated boolean not null default false,
      started_at timestamptz,
      ended_at timestamptz,
      created_at timestamptz not null default now()
    );
    -- A vehicle and a (real) messenger are in at most one active round.
    create unique index rounds_one_active_per_vehicle on rounds (vehicle_id) where status = 'active';
    create unique index rounds_one_active_per_messenger on rounds (messenger_id)
      where status = 'active' and not simulated;

    create table round_tasks (
      round_id bigint not null references rounds (id),
      task_id bigint not null unique references tasks (id),
      position integer not null,
      -- When tasks.eta was last computed: at most every API_ETA_MIN_INTERVAL_MS.
      eta_computed_at timestamptz,
      primary key (round_id, position)
    );

    -- The latest position of a round from each source; a fresh tracker position wins.
    create table round_positions (
      round_id bigint not null references rounds (id),
      source text not null check (source in ('tracker', 'phone')),
      latitude double precision not null,
      longitude double precision not null,
      recorded_at timestamptz not null,
      received_at timestamptz not null default now(),
      primary key (round_id, source)
    );

    -- Signature and pictures uploaded during a task; attached to the task at completion.
    create table task_media (
      id text primary key,
      task_id bigint not null references tasks (id),
      kind text not null check (kind in ('signature', 'picture')),
      content_type text not null check (content_type in ('image/jpeg', 'image/png')),
      bytes bytea not null,
      created_at timestamptz not null default now()
    );
    create index task_media_task_idx on task_media (task_id, created_at);

    -- One tracking SMS per task start, written with the start and sent after commit.
    create table sms_messages (
      id bigint generated always as identity primary key,
      task_id bigint not null unique references tasks (id),
      recipient text not null,
      sender text not null,
      body text not null,
      status text not null default 'pending' check (status in ('pending', 'sent', 'suppressed', 'failed')),
      attempts integer not null default 0,
      last_error text,
      next_attempt_at timestamptz not null default now(),
      sent_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index sms_messages_pending_idx on sms_messages (next_attempt_at) where status = 'pending';

    -- FLEET bucket changes, written in the transaction that changes a vehicle or its round.
    -- entry null: the key is deleted.
    create table fleet_outbox (
      id bigint generated always as identity primary key,
      fleet_key text not null,
      entry jsonb,
      created_at timestamptz not null default now(),
      published_at timestamptz
    );
    create index fleet_outbox_unpublished_idx on fleet_outbox (id) where published_at is null;

    -- The courier simulator of a test-environment account (opt-in).
    create table courier_simulators (
      account_id bigint primary key references accounts (id),
      enabled boolean not null,
      step_ms integer not null check (step_ms between 200 and 3600000),
      enabled_at timestamptz not null default now()
    );
    create table simulated_deliveries (
      delivery_id bigint primary key references deliveries (id),
      account_id bigint not null references accounts (id),
      round_id bigint references rounds (id),
      step integer not null default 0,
      next_at timestamptz not null,
      done boolean not null default false
    );
    create index simulated_deliveries_due_idx on simulated_deliveries (next_at) where not done;
    create index fleet_outbox_created_brin on fleet_outbox using brin (created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table simulated_deliveries, courier_simulators, fleet_outbox, sms_messages, task_media,
      round_positions, round_tasks, rounds, vehicles, messengers, idempotency_keys, outbox,
      delivery_packages, tasks, deliveries, delivery_zones, package_types, places, api_tokens, users,
      accounts
  `.execute(db);
}
