/**
 * A slot keeps its queues. When a worker cycle records a message delivered, the run of its
 * (endpoint, delivery) queue is leased to the same slot and comes back in the same round trip:
 * the pending messages from the lowest, while each is due (its predecessor has arrived:
 * not_before), never tried and not leased, up to the per-slot count per queue and twice that per
 * slot. The slot POSTs them one after the other, and the cycles that record them run beside its
 * sending. Before, the record made the next message head (one row version), a later cycle's claim
 * leased it (another), and each message of a delivery waited for a round trip of its own.
 *
 * Order per delivery holds. The run is leased in the transaction that records its predecessor
 * delivered, under the queue lock. Only the run's first message becomes the queue's head
 * (next_attempt_at); the others are leased with next_attempt_at left null, so no claim can take
 * one: if the worker dies, the head's lease ends and the queue starts again from the head. A
 * message whose predecessor in the slot was not delivered is not sent (the worker gives its
 * lease back and it waits as a non-head).
 *
 * The endpoint keeps as many slots as before (the slot's lease token was counted by every claim
 * until now and still is), and a slot never sends two messages at once: the worker names the
 * slots to continue (p_continue), only those that finished sending and whose every attempt the
 * cycle records. New queues are still claimed first in each cycle, so replicas share new
 * deliveries as before.
 *
 * finish_and_claim now records deliveries itself, because the runs must be leased between the
 * record and the settling that record_delivered (migration 0002) does in one call; nothing calls
 * record_delivered any more (0002's down drops it).
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- For each queue given with the lease token of the slot that delivered its last message (a
    -- null token: not to be continued), leases the queue's run to that slot; returns the
    -- messages at their places in the slot: every run's first message, then every second, ...
    create function continue_queues(
      p_endpoints uuid[], p_deliveries bigint[], p_tokens uuid[], p_per_slot int, p_lease_ms float8,
      p_step_ms float8
    ) returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      return query
      with delivered as (
        select distinct on (x.e, x.d) x.e, x.d, x.token
        from unnest(p_endpoints, p_deliveries, p_tokens) as x(e, d, token)
        where x.token is not null
        order by x.e, x.d
      ), runs as (
        select r.id, d.token, r.k
        from delivered d
        cross join lateral (
          select q.id, q.k from (
            select m.id, row_number() over (order by m.sequence, m.id) as k,
              bool_and(m.attempts = 0 and (m.lease_until is null or m.lease_until <= now()) and m.not_before <= now())
                over (order by m.sequence, m.id) as unbroken
            from (
              select * from messages m
              where m.endpoint_id = d.e and m.delivery_id = d.d and m.state = 'pending'
              order by m.sequence, m.id
              limit p_per_slot
            ) m
          ) q
          where q.unbroken
        ) r
      ), placed as (
        select r.*, (row_number() over (partition by r.token order by r.k, r.id) - 1)::int as slot_position
        from runs r
      ), leased as (
        update messages m
        set next_attempt_at = case when p.k = 1 then now() end,
          lease_until = now() + make_interval(secs => (p_lease_ms + p.slot_position * p_step_ms) / 1000),
          lease_token = p.token
        from placed p, endpoints e, events ev
        where m.id = p.id and p.slot_position < 2 * p_per_slot and e.id = m.endpoint_id and ev.id = m.event_id
          and e.status = 'enabled' and e.deleted_at is null
        returning m.id, m.endpoint_id, m.event_id, m.delivery_id, m.sequence, m.attempts, e.url, e.secret_ciphertext,
          e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.body, m.lease_token, p.slot_position
      )
      select * from leased;
    end $$;

    -- One worker cycle: leases heads of new queues for the free slots (p_slots), then records what
    -- was delivered and continues the slots named in p_continue (per delivered message, its slot's
    -- token or null) with the next message of their queues.
    drop function finish_and_claim(bigint[], uuid[], uuid[], bigint[], int[], timestamptz[], int[], int[], int, int, int, float8, float8);
    create function finish_and_claim(
      p_ids bigint[], p_tokens uuid[], p_endpoints uuid[], p_deliveries bigint[], p_attempts int[],
      p_attempted_at timestamptz[], p_durations int[], p_statuses int[], p_continue uuid[],
      p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8
    ) returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      -- Losing the last instants of these writes in a database crash only re-sends messages,
      -- with the same webhook-id.
      perform set_config('synchronous_commit', 'off', true);
      if p_slots > 0 then
        return query select * from claim_due(p_slots, p_per_endpoint, p_per_slot, p_lease_ms, p_step_ms);
      end if;
      if cardinality(p_ids) > 0 then
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
        return query select * from continue_queues(p_endpoints, p_deliveries, p_continue, p_per_slot, p_lease_ms, p_step_ms);
        perform settle_queues(p_endpoints, p_deliveries);
      end if;
    end $$;
  `.execute(db);
}

/** Back to migration 0002's finish_and_claim: claim, then record_delivered (which settles). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function finish_and_claim(bigint[], uuid[], uuid[], bigint[], int[], timestamptz[], int[], int[], uuid[], int, int, int, float8, float8);
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
    drop function continue_queues(uuid[], bigint[], uuid[], int, float8, float8);
  `.execute(db);
}
