/**
 * Intake of a batch of events in one round trip (`take_in`) instead of nine (begin, insert
 * events, endpoints, predecessors, locks, insert messages, successors, settle, commit), with
 * column arrays instead of a multi-row VALUES of thousands of parameters that PostgreSQL had to
 * parse and plan each time. A message that starts an empty queue is inserted as its head
 * (next_attempt_at set), as settle_queues would make it: one row version instead of two. Only
 * the queues that already held pending messages are settled.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Records the events not stored yet and queues one message per matching enabled endpoint;
    -- returns how many messages were queued. An event whose delivery's previous event has not
    -- arrived waits up to p_grace_ms for it (not_before).
    create function take_in(
      p_ids uuid[], p_accounts bigint[], p_deliveries bigint[], p_sequences int[], p_types text[], p_bodies text[],
      p_traceparents text[], p_occurred_at timestamptz[], p_grace_ms float8
    ) returns int
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    declare
      v_events uuid[];
      v_endpoints uuid[];
      v_deliveries bigint[];
      v_sequences int[];
      v_not_before timestamptz[];
      v_busy_endpoints uuid[];
      v_busy_deliveries bigint[];
      v_queued int;
    begin
      -- A batch may carry one event twice (a redelivery beside the original): stored once.
      with fresh as (
        insert into events (id, account_id, delivery_id, sequence, type, body, traceparent, occurred_at)
        select distinct on (x.id) x.id, x.account_id, x.delivery_id, x.sequence, x.type, x.body, x.traceparent, x.at
        from unnest(p_ids, p_accounts, p_deliveries, p_sequences, p_types, p_bodies, p_traceparents, p_occurred_at)
          as x(id, account_id, delivery_id, sequence, type, body, traceparent, at)
        order by x.id
        on conflict (id) do nothing
        returning id, account_id, delivery_id, sequence, type
      )
      select array_agg(f.id order by f.n), array_agg(f.endpoint_id order by f.n),
        array_agg(f.delivery_id order by f.n), array_agg(f.sequence order by f.n)
      into v_events, v_endpoints, v_deliveries, v_sequences
      from (
        select f.*, ep.id as endpoint_id, row_number() over (order by ep.id, f.delivery_id, f.sequence, f.id) as n
        from fresh f
        join endpoints ep on ep.account_id = f.account_id and ep.status = 'enabled' and ep.deleted_at is null
          and (ep.event_types is null or f.type = any(ep.event_types))
      ) f;
      if v_events is null then
        return 0;
      end if;

      -- Events of one delivery can reach two replicas at once; one whose predecessor has not
      -- arrived yet (this batch's events are seen) waits a little for it, so the receiver still
      -- sees them in order.
      select array_agg(case when x.s <= 1 or exists (
          select 1 from events e where e.delivery_id = x.d and e.sequence = x.s - 1
        ) then now() else now() + make_interval(secs => p_grace_ms / 1000) end order by x.n)
      into v_not_before
      from unnest(v_deliveries, v_sequences) with ordinality as x(d, s, n);

      perform lock_queues(v_endpoints, v_deliveries);
      -- Under the locks, a fresh snapshot: the queues that already hold pending messages.
      select array_agg(q.e), array_agg(q.d) into v_busy_endpoints, v_busy_deliveries
      from (select distinct e, d from unnest(v_endpoints, v_deliveries) as u(e, d)) q
      where exists (
        select 1 from messages m where m.endpoint_id = q.e and m.delivery_id = q.d and m.state = 'pending'
      );

      -- The first message of an empty queue is its head at once.
      insert into messages (endpoint_id, event_id, delivery_id, sequence, not_before, next_attempt_at)
      select x.e, x.ev, x.d, x.s, x.nb,
        case when x.pos = 1 and not x.busy then greatest(now(), x.nb) end
      from (
        select u.*, row_number() over (partition by u.e, u.d order by u.s, u.n) as pos,
          exists (select 1 from unnest(v_busy_endpoints, v_busy_deliveries) as b(e, d) where b.e = u.e and b.d = u.d) as busy
        from unnest(v_endpoints, v_events, v_deliveries, v_sequences, v_not_before) with ordinality as u(e, ev, d, s, nb, n)
      ) x
      order by x.n
      on conflict (endpoint_id, event_id) do nothing;
      get diagnostics v_queued = row_count;

      if v_busy_endpoints is not null then
        -- A successor that was waiting for one of these events need not wait any longer.
        update messages m set not_before = now()
        from unnest(v_endpoints, v_deliveries, v_sequences) as x(e, d, s)
        where m.endpoint_id = x.e and m.delivery_id = x.d and m.sequence = x.s + 1 and m.state = 'pending'
          and m.not_before > now();
        perform settle_queues(v_busy_endpoints, v_busy_deliveries);
      end if;
      return v_queued;
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function take_in(uuid[], bigint[], bigint[], int[], text[], text[], text[], timestamptz[], float8)
  `.execute(db);
}
