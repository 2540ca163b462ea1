/**
 * Claims of one endpoint are serialised over every replica. claim_due counted an endpoint's free
 * slots (its live lease tokens) in its statement's snapshot: two replicas claiming at the same
 * moment both saw the same free slots and both filled them, so the endpoint got more POSTs in
 * flight than WEBHOOKS_ENDPOINT_CONCURRENCY. Now claim_due first takes a transaction-scoped
 * advisory lock per endpoint it may claim from, in a statement of its own, and only then counts:
 * the count's fresh snapshot sees the leases of every claim that held the lock before (held to
 * commit). It claims only from the endpoints it locked.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The claim locks of endpoints, in the two-key advisory lock space (the queue locks use the
    -- one-key space): a class number and the endpoint. Always taken in endpoint id order.
    create function lock_endpoint_claims(p_endpoints uuid[]) returns void
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      perform pg_advisory_xact_lock(20261211, hashtext(x.e::text))
      from (select distinct e from unnest(p_endpoints) as u(e)) x
      order by x.e;
    end $$;

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
  `.execute(db);
}

/** Back to migration 0002's claim_due. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function claim_due(p_slots int, p_per_endpoint int, p_per_slot int, p_lease_ms float8, p_step_ms float8)
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
    drop function lock_endpoint_claims(uuid[]);
  `.execute(db);
}
