/**
 * A slot keeps its queues: when a worker cycle records a message delivered, the next message of
 * that (endpoint, delivery) queue is made its head and leased to the same slot in one row
 * version, and goes out in the cycle's answer. Before, the record made it the head (one row
 * version) and a later cycle's claim leased it (another): per webhook one non-HOT update less,
 * each with its index entries, and no wait for the next claim. The order per delivery holds: the
 * next message is leased in the transaction that records its predecessor delivered, under that
 * queue's lock. The endpoint keeps as many slots as before (the slot's lease token was counted
 * by every claim until now and still is), and a slot never sends two messages at once: the
 * worker names the slots to continue (p_continue), only those that have finished sending and
 * whose every attempt this cycle records. New queues are still claimed first in each cycle, so
 * replicas share new deliveries as before.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- For each queue given with the lease token of the slot that delivered its last message (a
    -- null token: not to be continued), leases the next message to that slot when it is due and
    -- was never tried; returns them, at positions after one another in each slot. Queues left
    -- alone are settled by the caller.
    create function continue_queues(
      p_endpoints uuid[], p_deliveries bigint[], p_tokens uuid[], p_lease_ms float8, p_step_ms float8
    ) returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      return query
      with delivered as (
        select distinct on (x.e, x.d) x.e, x.d, x.token
        from unnest(p_endpoints, p_deliveries, p_tokens) as x(e, d, token)
        where x.token is not null
        order by x.e, x.d
      ), next as (
        select n.id, d.token, (row_number() over (partition by d.token order by n.id) - 1)::int as slot_position
        from delivered d
        cross join lateral (
          select m.id, m.attempts, m.lease_until, m.not_before from messages m
          where m.endpoint_id = d.e and m.delivery_id = d.d and m.state = 'pending'
          order by m.sequence, m.id
          limit 1
        ) n
        where n.attempts = 0 and n.lease_until is null and n.not_before <= now()
      ), leased as (
        update messages m
        set next_attempt_at = now(),
          lease_until = now() + make_interval(secs => (p_lease_ms + n.slot_position * p_step_ms) / 1000),
          lease_token = n.token
        from next n, endpoints e, events ev
        where m.id = n.id and e.id = m.endpoint_id and ev.id = m.event_id and e.status = 'enabled'
          and e.deleted_at is null
        returning m.id, m.endpoint_id, m.event_id, m.delivery_id, m.sequence, m.attempts, e.url, e.secret_ciphertext,
          e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.body, m.lease_token, n.slot_position
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
        return query select * from continue_queues(p_endpoints, p_deliveries, p_continue, p_lease_ms, p_step_ms);
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
    drop function continue_queues(uuid[], bigint[], uuid[], float8, float8);
  `.execute(db);
}
