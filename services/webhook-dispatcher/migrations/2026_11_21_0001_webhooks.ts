/**
 * The webhooks schema: client endpoints (with encrypted signing secrets), every delivery event
 * received, the per-endpoint delivery queue (one message per event and endpoint) and the log of
 * every attempt. A dead letter is a message in state `dead`; the `dead_letters` view lists them.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table endpoints (
      id uuid primary key default gen_random_uuid(),
      account_id bigint not null,
      url text not null,
      -- null: every kind of event, including kinds added later.
      event_types text[],
      -- AES-256-GCM under WEBHOOKS_SECRET_KEY; the plain secret is shown once and never stored.
      secret_ciphertext text not null,
      -- During a rotation the previous secret signs too, until previous_secret_expires_at.
      previous_secret_ciphertext text,
      previous_secret_expires_at timestamptz,
      status text not null default 'enabled' check (status in ('enabled', 'disabled')),
      disabled_reason text,
      disabled_at timestamptz,
      -- Start of the current run of failed attempts; null after a success.
      failing_since timestamptz,
      created_at timestamptz not null default now(),
      deleted_at timestamptz
    );
    create index endpoints_account on endpoints (account_id) where deleted_at is null;

    -- Every event of the stream, kept for replay and to know whether a predecessor has arrived.
    create table events (
      id uuid primary key,
      account_id bigint not null,
      delivery_id bigint not null,
      sequence integer not null,
      type text not null,
      -- The exact JSON body POSTed (and signed) on every attempt.
      body text not null,
      occurred_at timestamptz not null,
      received_at timestamptz not null default now()
    );
    create index events_delivery on events (delivery_id, sequence);
    create index events_account_time on events (account_id, occurred_at);
    create index events_received on events (received_at);

    -- One message per event and endpoint. The messages of one (endpoint, delivery) form a queue:
    -- only its head (lowest sequence) has next_attempt_at set, so only it can be claimed.
    create table messages (
      id bigint generated always as identity primary key,
      endpoint_id uuid not null references endpoints (id),
      event_id uuid not null references events (id),
      delivery_id bigint not null,
      sequence integer not null,
      state text not null default 'pending' check (state in ('pending', 'delivered', 'dead')),
      attempts integer not null default 0,
      -- Earliest first attempt: later than creation while a predecessor event is still missing.
      not_before timestamptz not null default now(),
      next_attempt_at timestamptz,
      -- A worker holds the message while it sends; an expired lease is taken over.
      lease_until timestamptz,
      lease_token uuid,
      dead_reason text,
      created_at timestamptz not null default now(),
      finished_at timestamptz,
      unique (endpoint_id, event_id)
    );
    create index messages_due on messages (endpoint_id, next_attempt_at)
      where state = 'pending' and next_attempt_at is not null;
    create index messages_queue on messages (endpoint_id, delivery_id, sequence) where state = 'pending';
    create index messages_leased on messages (endpoint_id) where state = 'pending' and lease_until is not null;
    create index messages_pending_age on messages (created_at) where state = 'pending';
    create index messages_finished on messages (finished_at) where state <> 'pending';

    create table attempts (
      id bigint generated always as identity primary key,
      message_id bigint not null references messages (id),
      endpoint_id uuid not null references endpoints (id),
      attempt integer not null,
      attempted_at timestamptz not null,
      duration_ms integer not null,
      status_code integer,
      error text,
      outcome text not null check (outcome in ('delivered', 'retrying', 'dead_lettered')),
      next_attempt_at timestamptz
    );
    create index attempts_endpoint on attempts (endpoint_id, id desc);
    create index attempts_message on attempts (message_id);

    create view dead_letters as
      select m.id as message_id, m.endpoint_id, e.account_id, m.event_id, ev.type as event_type,
             m.delivery_id, m.sequence, m.attempts, m.dead_reason, m.finished_at as dead_at
      from messages m
      join endpoints e on e.id = m.endpoint_id
      join events ev on ev.id = m.event_id
      where m.state = 'dead';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop view dead_letters;
    drop table attempts;
    drop table messages;
    drop table events;
    drop table endpoints;
  `.execute(db);
}
