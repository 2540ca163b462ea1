/**
 * Intake leases the heads it creates to its own process, in the transaction that records them:
 * a webhook to an endpoint with free slots goes out as soon as its event is taken in, without a
 * wake-up and a claim round trip of the worker. `take_in_and_claim` is `take_in` followed by
 * `claim_due_among` restricted to the batch's endpoints. `claim_due_among` is the claim of
 * migration 0004 with an optional set of endpoints; given one, it takes their claim locks without
 * waiting (pg_try_advisory_xact_lock) and skips those another claim holds, because intake already
 * holds queue locks. `claim_due` now calls it for every endpoint.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Leases due heads of enabled endpoints (all, or those among p_among), in slots; see claim_due.
    create function claim_due_among(
      p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8, p_among uuid[]
    )
    returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    declare
      -- The slots' tokens derive from it: one random value per claim, one token per slot.
      v_claim text := gen_random_uuid()::text;
      v_endpoints uuid[];
    begin
      -- The endpoints with the earliest due heads: no more than p_slots, since a slot holds the
      -- messages of one endpoint.
      select array_agg(d.id) into v_endpoints from (
        select e.id from endpoints e
        cross join lateral (
          select m.next_attempt_at from messages m
          where m.endpoint_id = e.id and m.state = 'pending' and m.next_attempt_at <= now()
            and (m.lease_until is null or m.lease_until <= now())
          order by m.next_attempt_at
          limit 1
        ) h
        where e.status = 'enabled' and e.deleted_at is null and (p_among is null or e.id = any(p_among))
        order by h.next_attempt_at, e.id
        limit p_slots
      ) d;
      if v_endpoints is null then
        return;
      end if;
      if p_among is null then
        perform lock_endpoint_claims(v_endpoints);
      else
        -- Intake holds queue locks: it never waits for a claim lock (that could close a circle
        -- with a cycle holding one and waiting for a queue lock) and skips the endpoints another
        -- claim holds; their heads are claimed by a worker cycle.
        select array_agg(x.e) into v_endpoints from unnest(v_endpoints) as x(e)
        where pg_try_advisory_xact_lock(20261211, hashtext(x.e::text));
        if v_endpoints is null then
          return;
        end if;
      end if;

      -- A new statement, a new snapshot: the leases of the claims that held the locks are seen.
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
        where e.id = any(v_endpoints) and e.status = 'enabled' and e.deleted_at is null and f.free > 0
      ), ranked as (
        -- Slots ranked by their first message's due time; the first p_slots are opened.
        select c.*, dense_rank() over (order by c.first_due, c.endpoint_id, c.slot) as slot_rank
        from (select *, min(next_attempt_at) over (partition by endpoint_id, slot) as first_due from candidates) c
      ), locked as (
        -- Rechecked under the row lock: a lease may have ended or been given back meanwhile.
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

    create or replace function claim_due(p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8)
    returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      return query select * from claim_due_among(p_slots, p_per_endpoint, p_per_slot, p_lease_ms, p_step_ms, null);
    end $$;

    -- Takes in a batch (take_in), then leases due heads of the batch's endpoints for up to p_slots
    -- slots of the calling process. Commits with full durability, as intake must.
    create function take_in_and_claim(
      p_ids uuid[], p_accounts bigint[], p_deliveries bigint[], p_sequences int[], p_types text[], p_bodies text[],
      p_traceparents text[], p_occurred_at timestamptz[], p_grace_ms float8,
      p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8
    ) returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      perform take_in(p_ids, p_accounts, p_deliveries, p_sequences, p_types, p_bodies, p_traceparents, p_occurred_at,
        p_grace_ms);
      if p_slots > 0 then
        return query select * from claim_due_among(p_slots, p_per_endpoint, p_per_slot, p_lease_ms, p_step_ms, array(
          select ep.id from endpoints ep
          where ep.account_id = any(p_accounts) and ep.status = 'enabled' and ep.deleted_at is null
        ));
      end if;
    end $$;
  `.execute(db);
}

/** Back to migration 0004's claim_due. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function take_in_and_claim(uuid[], bigint[], bigint[], int[], text[], text[], text[], timestamptz[], float8, int, int, int, float8, float8);
    create or replace function claim_due(p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8)
    returns setof claimed_message
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    declare
      -- The slots' tokens derive from it: one random value per claim, one token per slot.
      v_claim text := gen_random_uuid()::text;
      v_endpoints uuid[];
    begin
      -- The endpoints with the earliest due heads: no more than p_slots, since a slot holds the
      -- messages of one endpoint.
      select array_agg(d.id) into v_endpoints from (
        select e.id from endpoints e
        cross join lateral (
          select m.next_attempt_at from messages m
          where m.endpoint_id = e.id and m.state = 'pending' and m.next_attempt_at <= now()
            and (m.lease_until is null or m.lease_until <= now())
          order by m.next_attempt_at
          limit 1
        ) h
        where e.status = 'enabled' and e.deleted_at is null
        order by h.next_attempt_at, e.id
        limit p_slots
      ) d;
      if v_endpoints is null then
        return;
      end if;
      perform lock_endpoint_claims(v_endpoints);

      -- A new statement, a new snapshot: the leases of the claims that held the locks are seen.
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
        where e.id = any(v_endpoints) and e.status = 'enabled' and e.deleted_at is null and f.free > 0
      ), ranked as (
        -- Slots ranked by their first message's due time; the first p_slots are opened.
        select c.*, dense_rank() over (order by c.first_due, c.endpoint_id, c.slot) as slot_rank
        from (select *, min(next_attempt_at) over (partition by endpoint_id, slot) as first_due from candidates) c
      ), locked as (
        -- Rechecked under the row lock: a lease may have ended or been given back meanwhile.
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
    drop function claim_due_among(int, int, int, float8, float8, uuid[]);
  `.execute(db);
}
