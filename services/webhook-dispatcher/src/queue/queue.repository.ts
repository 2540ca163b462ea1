/**
 * The per-endpoint delivery queue. The messages of one (endpoint, delivery) form a queue in
 * `sequence` order, and only its head carries a `next_attempt_at`: workers claim only heads, so
 * an event is never sent before the earlier events of its delivery are delivered or
 * dead-lettered for that endpoint, however many replicas claim at once. Every change to a
 * queue's membership holds the queue's advisory lock and then settles the queue.
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";

export interface QueueRef {
  endpoint_id: string;
  delivery_id: number;
}

/**
 * Takes the advisory locks of queues, always in one global order (endpoint, then delivery), so
 * two transactions locking several queues never deadlock. Locks are re-entrant in a transaction.
 */
export async function lockQueuePairs(tx: Db, queues: QueueRef[]): Promise<void> {
  const unique = [...new Map(queues.map((q) => [`${q.endpoint_id}:${q.delivery_id}`, q])).values()].sort((a, b) =>
    a.endpoint_id < b.endpoint_id ? -1 : a.endpoint_id > b.endpoint_id ? 1 : a.delivery_id - b.delivery_id,
  );
  if (unique.length === 0) return;
  await sql`
    select pg_advisory_xact_lock(hashtextextended(x.e || ':' || x.d::text, 0))
    from unnest(${unique.map((q) => q.endpoint_id)}::text[], ${unique.map((q) => q.delivery_id)}::bigint[])
      with ordinality as x(e, d, n)
    order by x.n
  `.execute(tx);
}

/** Takes the advisory locks of the queues of one endpoint. */
export async function lockQueues(tx: Db, endpointId: string, deliveryIds: number[]): Promise<void> {
  await lockQueuePairs(
    tx,
    deliveryIds.map((delivery_id) => ({ endpoint_id: endpointId, delivery_id })),
  );
}

/** Settles the queues given, endpoint by endpoint. */
export async function settleQueuePairs(tx: Db, queues: QueueRef[]): Promise<void> {
  for (const [endpointId, list] of Map.groupBy(queues, (q) => q.endpoint_id)) {
    await settleQueues(tx, endpointId, [...new Set(list.map((q) => q.delivery_id))]);
  }
}

/**
 * Makes the lowest pending message of each queue its head, unless the current head has already
 * been tried or is being sent (it keeps its place: it may have reached the receiver).
 */
export async function settleQueues(tx: Db, endpointId: string, deliveryIds: number[]): Promise<void> {
  await sql`
    with q as (
      select m.id, m.next_attempt_at,
        row_number() over (partition by m.delivery_id order by m.sequence, m.id) as pos,
        bool_or(m.next_attempt_at is not null and (m.attempts > 0 or m.lease_until is not null))
          over (partition by m.delivery_id) as started
      from messages m
      where m.endpoint_id = ${endpointId} and m.delivery_id = any(${deliveryIds}::bigint[]) and m.state = 'pending'
    )
    update messages m
    set next_attempt_at = case when q.pos = 1 then coalesce(m.next_attempt_at, greatest(now(), m.not_before)) end
    from q
    where m.id = q.id and not q.started and (q.pos = 1 or m.next_attempt_at is not null)
  `.execute(tx);
}

/** A message claimed by a worker, with what it needs to send it. */
export interface ClaimedMessage {
  id: number;
  endpoint_id: string;
  event_id: string;
  delivery_id: number;
  sequence: number;
  attempts: number;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  body: string;
}

export interface ClaimOptions {
  limit: number;
  /** In-flight cap per endpoint, counted over every replica's leases. */
  perEndpoint: number;
  leaseMs: number;
  token: string;
}

/**
 * Writes of the worker (leases, attempt records) need not wait for the WAL flush: if the
 * database loses the last instants of them in a crash, the message is only sent again, with
 * the same webhook-id, which receivers must accept anyway. Intake, whose commit lets the event
 * be acknowledged to JetStream, keeps the full guarantee.
 */
export async function relaxDurability(tx: Db): Promise<void> {
  await sql`set local synchronous_commit = off`.execute(tx);
}

/** Leases up to `limit` due queue heads of enabled endpoints, oldest first, fairly per endpoint. */
export async function claimDueMessages(db: Db, options: ClaimOptions): Promise<ClaimedMessage[]> {
  // One statement, its own transaction: the relaxed commit is set inside it (see relaxDurability).
  const { rows } = await sql<ClaimedMessage>`
    with relaxed as (select set_config('synchronous_commit', 'off', true)),
    picked as (
      select h.id, h.next_attempt_at
      from endpoints e
      cross join lateral (
        select m.id, m.next_attempt_at from messages m
        where m.endpoint_id = e.id and m.state = 'pending' and m.next_attempt_at <= now()
          and (m.lease_until is null or m.lease_until <= now())
        order by m.next_attempt_at
        limit greatest(0, ${options.perEndpoint}::int - (
          select count(*) from messages l
          where l.endpoint_id = e.id and l.state = 'pending' and l.lease_until > now()))
      ) h
      where e.status = 'enabled' and e.deleted_at is null
      order by h.next_attempt_at
      limit ${options.limit}::int
    ), locked as (
      -- Rechecked under the row lock: another replica may have leased it since the snapshot.
      select m.id from messages m
      where m.id in (select id from picked) and m.state = 'pending' and m.next_attempt_at <= now()
        and (m.lease_until is null or m.lease_until <= now())
      for update skip locked
    )
    update messages m
    set lease_until = now() + make_interval(secs => ${options.leaseMs}::float8 / 1000), lease_token = ${options.token}::uuid
    from locked, endpoints e, events ev, relaxed
    where m.id = locked.id and e.id = m.endpoint_id and ev.id = m.event_id
    returning m.id, m.endpoint_id, m.event_id, m.delivery_id, m.sequence, m.attempts, e.url, e.secret_ciphertext,
      e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.body
  `.execute(db);
  return rows;
}

/** Dead-letters every pending message of an endpoint (it was disabled or deleted); returns how many. */
export async function deadLetterPending(tx: Db, endpointId: string, reason: string): Promise<number> {
  const result = await tx
    .updateTable("messages")
    .set({ state: "dead", dead_reason: reason, next_attempt_at: null, finished_at: new Date() })
    .where("endpoint_id", "=", endpointId)
    .where("state", "=", "pending")
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export interface QueueStats {
  depth: number;
  oldestPendingAgeSeconds: number;
}

/** Pending messages and the age of the oldest, for the metrics. */
export async function queueStats(db: Db): Promise<QueueStats> {
  const { rows } = await sql<{ depth: number; age: number | null }>`
    select count(*)::int as depth, extract(epoch from now() - min(created_at))::float8 as age
    from messages where state = 'pending'
  `.execute(db);
  return { depth: rows[0]?.depth ?? 0, oldestPendingAgeSeconds: rows[0]?.age ?? 0 };
}
