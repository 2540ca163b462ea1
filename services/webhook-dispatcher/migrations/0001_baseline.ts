/**
 * The webhooks schema: client endpoints (with encrypted signing secrets), every delivery event
 * received, the queue of webhooks that failed or waited too long (one message per event and
 * endpoint) and the log of every attempt. A dead letter is a message in state `dead`; the
 * `dead_letters` view lists them.
 *
 * Dispatch is by partition (src/partitions, src/intake, src/worker): the replica that owns an
 * account's partition of DELIVERY_EVENTS POSTs its webhooks straight from the stream, so a
 * webhook delivered at the first attempt leaves one row, its attempt. Only a webhook that fails
 * or waits too long becomes a message, and only the partition's owner retries it.
 *
 * No foreign keys on the hot tables (messages, attempts): each checked reference cost a trigger
 * running a `SELECT ... FOR KEY SHARE` that locks the referenced row, four per webhook, every
 * lock of the endpoint row a WAL record and, with several transactions at once, a multixact
 * (measured on one backend, a webhook taken in, claimed and recorded alone: 2.9 -> 1.75 ms of
 * PostgreSQL CPU). The references hold by construction: messages are inserted only for
 * endpoints and events read in the same statement (intake, replay); endpoints are never deleted
 * (deleted_at); retention deletes attempts, then finished messages without attempts, then
 * events without messages (src/queue/retention.ts), and a replayed message is pending again, so
 * retention leaves it alone.
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

    -- Every event that became a message, kept for its retries and replay.
    create table events (
      id uuid primary key,
      account_id bigint not null,
      delivery_id bigint not null,
      sequence integer not null,
      type text not null,
      -- The exact JSON body POSTed (and signed) on every attempt.
      body text not null,
      occurred_at timestamptz not null,
      received_at timestamptz not null default now(),
      -- The trace context the event arrived with (in its NATS headers), so every POST of it,
      -- however much later, continues the trace of the request that caused it.
      traceparent text
    );
    create index events_delivery on events (delivery_id, sequence);
    create index events_account_time on events (account_id, occurred_at);
    create index events_received on events (received_at);

    -- One message per event and endpoint. The messages of one (endpoint, delivery) form a queue:
    -- only its head (lowest sequence) has next_attempt_at set, so only it can be claimed.
    create table messages (
      id bigint generated always as identity primary key,
      endpoint_id uuid not null,
      event_id uuid not null,
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
      -- The account's partition of DELIVERY_EVENTS: its owner claims the due heads of its
      -- partitions only (and limits each endpoint's POSTs in memory, so claims count no leases).
      partition smallint not null,
      -- The endpoint's account: due heads are claimed account by account, the accounts taking
      -- turns (src/worker/retry-worker.ts), so one account's backlog holds no other's back.
      account_id bigint not null,
      unique (endpoint_id, event_id)
    );
    create index messages_queue on messages (endpoint_id, delivery_id, sequence) where state = 'pending';
    create index messages_finished on messages (finished_at) where state <> 'pending';
    -- Both steps of a claim: the accounts with due heads in a partition (a loose index scan),
    -- then an account's earliest due heads.
    create index messages_due_by_account on messages (partition, account_id, next_attempt_at)
      where state = 'pending' and next_attempt_at is not null;

    -- Attempts carry their event (id, kind, delivery, sequence): most have no message or event
    -- row to join. attempts_event finds the attempts of an event, so an event seen again (a
    -- redelivery, a re-publish) is not sent twice. Attempts are appended in time order, so a BRIN
    -- index serves retention for next to nothing.
    create table attempts (
      id bigint generated always as identity primary key,
      -- null: the webhook was sent straight from the stream and never queued.
      message_id bigint,
      endpoint_id uuid not null,
      attempt integer not null,
      attempted_at timestamptz not null,
      duration_ms integer not null,
      status_code integer,
      error text,
      outcome text not null check (outcome in ('delivered', 'retrying', 'dead_lettered')),
      next_attempt_at timestamptz,
      event_id uuid not null,
      event_type text not null,
      delivery_id bigint not null,
      sequence integer not null
    );
    create index attempts_endpoint on attempts (endpoint_id, id desc);
    create index attempts_event on attempts (event_id, endpoint_id);
    create index attempts_time on attempts using brin (attempted_at);

    create view dead_letters as
      select m.id as message_id, m.endpoint_id, e.account_id, m.event_id, ev.type as event_type,
             m.delivery_id, m.sequence, m.attempts, m.dead_reason, m.finished_at as dead_at
      from messages m
      join endpoints e on e.id = m.endpoint_id
      join events ev on ev.id = m.event_id
      where m.state = 'dead';

    -- The queue's functions (src/queue/queue.repository.ts). Every statement inside a function
    -- takes a fresh snapshot, so each sees what the previous one wrote and what the lock holders
    -- before it committed, as separate statements would. Plans are generic (planning these
    -- statements costs about as much as running them), and the statements are written so that
    -- any plan walks the right index, even before the tables have statistics.

    -- Advisory locks of (endpoint, delivery) queues, always taken in one global order, so two
    -- transactions locking several queues never wait on each other in a circle. Re-entrant.
    create function lock_queues(p_endpoints uuid[], p_deliveries bigint[]) returns void
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      -- A volatile function in the select list runs after the sort: the locks come in order.
      perform pg_advisory_xact_lock(hashtextextended(x.e::text || ':' || x.d::text, 0))
      from (select distinct e, d from unnest(p_endpoints, p_deliveries) as u(e, d)) x
      order by x.e, x.d;
    end $$;

    -- Makes the lowest pending message of each queue its head, unless the current head was
    -- already tried or is being sent (it keeps its place: it may have reached the receiver).
    -- Only rows whose next_attempt_at changes are written. One bounded index walk per queue
    -- (messages_queue): "offset 0" keeps the lateral subquery from being flattened into a hash
    -- join over every pending message, the generic plan otherwise chosen.
    create function settle_queues(p_endpoints uuid[], p_deliveries bigint[]) returns void
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      with q as (
        select m.id, m.next_attempt_at,
          row_number() over (partition by m.endpoint_id, m.delivery_id order by m.sequence, m.id) as pos,
          bool_or(m.next_attempt_at is not null and (m.attempts > 0 or m.lease_until is not null))
            over (partition by m.endpoint_id, m.delivery_id) as started
        from (select distinct e, d from unnest(p_endpoints, p_deliveries) as x(e, d)) p
        cross join lateral (
          select m.id, m.endpoint_id, m.delivery_id, m.sequence, m.next_attempt_at, m.attempts, m.lease_until
          from messages m
          where m.endpoint_id = p.e and m.delivery_id = p.d and m.state = 'pending'
          offset 0
        ) m
      )
      update messages m
      set next_attempt_at = case when q.pos = 1 then greatest(now(), m.not_before) end
      from q
      where m.id = q.id and not q.started
        and ((q.pos = 1 and q.next_attempt_at is null) or (q.pos > 1 and q.next_attempt_at is not null));
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function settle_queues(uuid[], bigint[]);
    drop function lock_queues(uuid[], bigint[]);
    drop view dead_letters;
    drop table attempts;
    drop table messages;
    drop table events;
    drop table endpoints;
  `.execute(db);
}
