/**
 * Intake and settling cost per queue touched, not per pending message. Measured with
 * pg_stat_statements on a 2,000-event burst: take_in spent 90% of its time in settle_queues, which
 * (1) rewrote every untouched head with its own value, a new row version and index entries per
 * queue each time a later event of the delivery arrived, and (2) was planned as a hash join over
 * every pending message of every endpoint, not the index walk per queue its comment promised (the
 * generic plan cannot know how few rows a queue holds). The busy-queue test and the successor
 * update of take_in had the same hash-join plan. Now each runs one bounded index walk per queue
 * (`offset 0` / `limit 1` keep the lateral subquery from being flattened into a join), and
 * settle_queues writes only the rows whose next_attempt_at really changes. Results are the same.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Makes the lowest pending message of each queue its head, unless the current head was
    -- already tried or is being sent (it keeps its place: it may have reached the receiver).
    -- Only rows whose next_attempt_at changes are written.
    create or replace function settle_queues(p_endpoints uuid[], p_deliveries bigint[]) returns void
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

    -- Records the events not stored yet and queues one message per matching enabled endpoint;
    -- returns how many messages were queued. An event whose delivery's previous event has not
    -- arrived waits up to p_grace_ms for it (not_before).
    create or replace function take_in(
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
      -- Under the locks, a fresh snapshot: the queues that already hold pending messages, each
      -- looked up by its own index walk.
      select array_agg(q.e), array_agg(q.d) into v_busy_endpoints, v_busy_deliveries
      from (select distinct e, d from unnest(v_endpoints, v_deliveries) as u(e, d)) q
      cross join lateral (
        select 1 from messages m where m.endpoint_id = q.e and m.delivery_id = q.d and m.state = 'pending' limit 1
      ) busy;
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
        cross join lateral (
          select w.id from messages w
          where w.endpoint_id = x.e and w.delivery_id = x.d and w.sequence = x.s + 1 and w.state = 'pending'
            and w.not_before > now()
          offset 0
        ) waiting
        where m.id = waiting.id;
        perform settle_queues(v_busy_endpoints, v_busy_deliveries);
      end if;
      return v_queued;
    end $$;
  `.execute(db);
}

/**
 * Nothing to undo: the functions return and write the same results as migration 0002's
 * settle_queues and 0005's take_in, with the same signatures, so the earlier migrations' down
 * steps still drop them.
 */
export async function down(_db: Kysely<unknown>): Promise<void> {}
