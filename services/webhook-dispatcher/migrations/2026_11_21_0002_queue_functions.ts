/**
 * The queue's hot path as server-side functions, so one worker cycle (lease heads for the free
 * slots, record the webhooks just delivered, hand their queues to the next heads) is one round
 * trip instead of ten. Every statement inside a function takes a fresh snapshot, so each sees
 * what the previous one wrote and what the lock holders before it committed, as separate
 * statements would. Plans are generic (planning these statements costs about as much as running
 * them), and the statements are written so that any plan walks the right index, even before the
 * tables have statistics.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
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
    create function settle_queues(p_endpoints uuid[], p_deliveries bigint[]) returns void
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      with q as (
        select m.id,
          row_number() over (partition by m.endpoint_id, m.delivery_id order by m.sequence, m.id) as pos,
          bool_or(m.next_attempt_at is not null and (m.attempts > 0 or m.lease_until is not null))
            over (partition by m.endpoint_id, m.delivery_id) as started
        from (select distinct e, d from unnest(p_endpoints, p_deliveries) as x(e, d)) p
        -- One index walk per queue (messages_queue), whatever the statistics say.
        cross join lateral (
          select * from messages m
          where m.endpoint_id = p.e and m.delivery_id = p.d and m.state = 'pending'
        ) m
      )
      update messages m
      set next_attempt_at = case when q.pos = 1 then coalesce(m.next_attempt_at, greatest(now(), m.not_before)) end
      from q
      where m.id = q.id and not q.started and (q.pos = 1 or m.next_attempt_at is not null);
    end $$;

    -- Records the attempts that were delivered (2xx): the messages (still leased with the token
    -- of their claim) are done, their endpoints' failure run ends, the attempts are logged, and
    -- the next message of each queue becomes its head.
    create function record_delivered(
      p_ids bigint[], p_tokens uuid[], p_endpoints uuid[], p_deliveries bigint[], p_attempts int[],
      p_attempted_at timestamptz[], p_durations int[], p_statuses int[]
    ) returns void
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      perform lock_queues(p_endpoints, p_deliveries);
      update messages m
      set attempts = m.attempts + 1, lease_until = null, lease_token = null, state = 'delivered',
          next_attempt_at = null, finished_at = x.at
      from unnest(p_ids, p_tokens, p_attempted_at) as x(id, token, at)
      where m.id = any(p_ids) and m.id = x.id and m.lease_token = x.token and m.state = 'pending';
      update endpoints set failing_since = null where id = any(p_endpoints) and failing_since is not null;
      insert into attempts (message_id, endpoint_id, attempt, attempted_at, duration_ms, status_code, outcome)
      select x.id, x.e, x.n, x.at, x.ms, x.status, 'delivered'
      from unnest(p_ids, p_endpoints, p_attempts, p_attempted_at, p_durations, p_statuses)
        as x(id, e, n, at, ms, status);
      perform settle_queues(p_endpoints, p_deliveries);
    end $$;

    -- A leased message with what the worker needs to send it: its slot (the lease token) and
    -- its place in the slot's sending order.
    create type claimed_message as (
      id bigint, endpoint_id uuid, event_id uuid, delivery_id bigint, sequence int, attempts int, url text,
      secret_ciphertext text, previous_secret_ciphertext text, previous_secret_expires_at timestamptz, body text,
      lease_token uuid, slot_position int
    );

    -- Leases due queue heads of enabled endpoints, oldest first, in slots: a slot is one lease
    -- token whose messages (up to p_per_slot, from different queues) are POSTed one after the
    -- other, so an endpoint never has more POSTs in flight than slots, and at most p_per_endpoint
    -- slots hold leases on it over every replica. At most p_slots slots are opened. The lease of
    -- the message at position k lasts p_lease_ms + k * p_step_ms: the k POSTs before it fit in
    -- the extra time.
    create function claim_due(p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8)
    returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    declare
      -- The slots' tokens derive from it: one random value per claim, one token per slot.
      v_claim text := gen_random_uuid()::text;
    begin
      return query
      with candidates as (
        select h.id, e.id as endpoint_id, h.next_attempt_at, (h.rank - 1) % greatest(f.free, 1) as slot,
          ((h.rank - 1) / greatest(f.free, 1))::int as slot_position
        from endpoints e
        cross join lateral (
          select (p_per_endpoint - count(distinct l.lease_token))::int as free from messages l
          where l.endpoint_id = e.id and l.state = 'pending' and l.lease_until > now()
        ) f
        cross join lateral (
          select m.id, m.next_attempt_at, row_number() over (order by m.next_attempt_at, m.id) as rank
          from messages m
          where m.endpoint_id = e.id and m.state = 'pending' and m.next_attempt_at <= now()
            and (m.lease_until is null or m.lease_until <= now())
          order by m.next_attempt_at, m.id
          limit greatest(f.free, 0) * p_per_slot
        ) h
        where e.status = 'enabled' and e.deleted_at is null and f.free > 0
      ), ranked as (
        -- Slots ranked by their first message's due time; the first p_slots are opened.
        select c.*, dense_rank() over (order by c.first_due, c.endpoint_id, c.slot) as slot_rank
        from (select *, min(next_attempt_at) over (partition by endpoint_id, slot) as first_due from candidates) c
      ), locked as (
        -- Rechecked under the row lock: another replica may have leased it since the snapshot.
        select m.id, md5(v_claim || r.endpoint_id::text || r.slot::text)::uuid as token, r.slot_position
        from ranked r join messages m on m.id = r.id
        where r.slot_rank <= p_slots and m.state = 'pending' and m.next_attempt_at <= now()
          and (m.lease_until is null or m.lease_until <= now())
        for update of m skip locked
      ), leased as (
        update messages m
        set lease_until = now() + make_interval(secs => (p_lease_ms + l.slot_position * p_step_ms) / 1000),
          lease_token = l.token
        from locked l, endpoints e, events ev
        where m.id = l.id and e.id = m.endpoint_id and ev.id = m.event_id
        returning m.id, m.endpoint_id, m.event_id, m.delivery_id, m.sequence, m.attempts, e.url, e.secret_ciphertext,
          e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.body, m.lease_token, l.slot_position
      )
      select * from leased;
    end $$;

    -- One worker cycle: leases heads for the free slots, then records what was delivered. The
    -- slots this frees are claimed by the worker's next cycle, a moment later: meanwhile the
    -- other replicas may take them, so they share even a single endpoint's work. The writes need
    -- not wait for the WAL flush: losing their last instants in a database crash only re-sends
    -- messages, with the same webhook-id.
    create function finish_and_claim(
      p_ids bigint[], p_tokens uuid[], p_endpoints uuid[], p_deliveries bigint[], p_attempts int[],
      p_attempted_at timestamptz[], p_durations int[], p_statuses int[],
      p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8
    ) returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      perform set_config('synchronous_commit', 'off', true);
      if p_slots > 0 then
        return query select * from claim_due(p_slots, p_per_endpoint, p_per_slot, p_lease_ms, p_step_ms);
      end if;
      if cardinality(p_ids) > 0 then
        perform record_delivered(p_ids, p_tokens, p_endpoints, p_deliveries, p_attempts, p_attempted_at,
          p_durations, p_statuses);
      end if;
    end $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function finish_and_claim(bigint[], uuid[], uuid[], bigint[], int[], timestamptz[], int[], int[], int, int, int, float8, float8);
    drop function claim_due(int, int, int, float8, float8);
    drop type claimed_message;
    drop function record_delivered(bigint[], uuid[], uuid[], bigint[], int[], timestamptz[], int[], int[]);
    drop function settle_queues(uuid[], bigint[]);
    drop function lock_queues(uuid[], bigint[]);
  `.execute(db);
}
