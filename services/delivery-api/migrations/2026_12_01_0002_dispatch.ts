/**
 * Dispatch and tracking: messengers, vehicles, rounds and their ordered tasks, the latest
 * positions of each round, uploaded proof images, the SMS outbox, the fleet outbox (FLEET KV
 * bucket) and the test-environment courier simulator.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
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
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table simulated_deliveries, courier_simulators, fleet_outbox, sms_messages, task_media,
      round_positions, round_tasks, rounds, vehicles, messengers cascade
  `.execute(db);
}
