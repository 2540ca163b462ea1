/**
 * The queue in PostgreSQL, for the webhooks that cannot go straight from the stream: one that
 * failed (and waits for its retry), the events of its delivery after it, one that waited too
 * long for its endpoint, and replays. The messages of one (endpoint, delivery) form a queue in
 * `sequence` order, and only its head carries a `next_attempt_at`: the owner of the partition
 * claims only heads, so an event is never sent before the earlier events of its delivery are
 * delivered or dead-lettered for that endpoint. Every change to a queue's membership holds the
 * queue's advisory lock and then settles the queue.
 */
import { type Selectable, sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { EventsTable } from "./queue.table.ts";

export interface QueueRef {
  endpoint_id: string;
  delivery_id: number;
}

/**
 * Takes the advisory locks of queues (`lock_queues`, migrations/0001_baseline.ts), always in one global
 * order, so two transactions locking several queues never deadlock. Re-entrant in a transaction.
 */
export async function lockQueues(tx: Db, queues: QueueRef[]): Promise<void> {
  if (queues.length === 0) return;
  await sql`select lock_queues(${queues.map((q) => q.endpoint_id)}::uuid[], ${queues.map((q) => q.delivery_id)}::bigint[])`.execute(
    tx,
  );
}

/**
 * Settles the queues given (`settle_queues`, migrations/0001_baseline.ts): the lowest pending
 * message of each becomes its head, unless the current head has already been tried or is being
 * sent.
 */
export async function settleQueues(tx: Db, queues: QueueRef[]): Promise<void> {
  if (queues.length === 0) return;
  await sql`select settle_queues(${queues.map((q) => q.endpoint_id)}::uuid[], ${queues.map((q) => q.delivery_id)}::bigint[])`.execute(
    tx,
  );
}

/**
 * An event as the queue stores it (an `events` row): what a later attempt needs to send it
 * again, `body` being the exact bytes published, which every attempt POSTs and signs.
 */
export type StoredEvent = Omit<Selectable<EventsTable>, "occurred_at" | "received_at"> & { occurred_at: string };

/** Stores events not stored yet (their id decides). */
export async function storeEvents(tx: Db, events: StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  const column = <T>(pick: (e: StoredEvent) => T) => events.map(pick);
  await sql`
    insert into events (id, account_id, delivery_id, sequence, type, body, occurred_at, traceparent)
    select * from unnest(${column((e) => e.id)}::uuid[], ${column((e) => e.account_id)}::bigint[],
      ${column((e) => e.delivery_id)}::bigint[], ${column((e) => e.sequence)}::int[], ${column((e) => e.type)}::text[],
      ${column((e) => e.body)}::text[], ${column((e) => e.occurred_at)}::timestamptz[],
      ${column((e) => e.traceparent)}::text[])
    on conflict (id) do nothing
  `.execute(tx);
}

/** A message to queue: one event for one endpoint. */
export interface NewMessage {
  endpoint_id: string;
  event_id: string;
  delivery_id: number;
  sequence: number;
  partition: number;
}

/**
 * Queues messages (their events stored first) and answers their ids in the order given. A
 * message already queued for that endpoint and event keeps its state, unless `again` (a replay):
 * then one delivered or dead-lettered becomes pending with a fresh retry count (its id is not
 * answered: 0). One for an endpoint disabled or deleted meanwhile is dead-lettered at once. The
 * caller holds the queues' locks and settles them afterwards.
 */
export async function queueMessages(
  tx: Db,
  messages: NewMessage[],
  options: { again?: boolean } = {},
): Promise<number[]> {
  if (messages.length === 0) return [];
  const onConflict = options.again
    ? sql`do update set state = 'pending', attempts = 0, next_attempt_at = null, lease_until = null,
        lease_token = null, dead_reason = null, finished_at = null, not_before = now()
        where m.state <> 'pending'`
    : // A no-op update, so that the row's id comes back either way.
      sql`do update set partition = excluded.partition`;
  const column = <T>(pick: (m: NewMessage) => T) => messages.map(pick);
  const { rows } = await sql<{ id: number; endpoint_id: string; event_id: string }>`
    insert into messages as m (endpoint_id, event_id, delivery_id, sequence, partition, account_id, state, dead_reason, finished_at)
    select x.endpoint_id, x.event_id, x.delivery_id, x.sequence, x.partition, e.account_id,
      case when e.status = 'enabled' and e.deleted_at is null then 'pending' else 'dead' end,
      case when e.deleted_at is not null then 'endpoint deleted'
           when e.status <> 'enabled' then 'endpoint disabled: ' || coalesce(e.disabled_reason, 'by the operator') end,
      case when e.status = 'enabled' and e.deleted_at is null then null else now() end
    from unnest(${column((m) => m.endpoint_id)}::uuid[], ${column((m) => m.event_id)}::uuid[],
      ${column((m) => m.delivery_id)}::bigint[], ${column((m) => m.sequence)}::int[], ${column((m) => m.partition)}::smallint[])
      as x(endpoint_id, event_id, delivery_id, sequence, partition)
    join endpoints e on e.id = x.endpoint_id
    on conflict (endpoint_id, event_id) ${onConflict}
    returning m.id, m.endpoint_id, m.event_id
  `.execute(tx);
  const ids = new Map(rows.map((row) => [`${row.endpoint_id}/${row.event_id}`, row.id]));
  return messages.map((m) => ids.get(`${m.endpoint_id}/${m.event_id}`) ?? 0);
}

/** The queues among those given that hold pending messages. */
export async function busyQueues(tx: Db, queues: QueueRef[]): Promise<Set<string>> {
  if (queues.length === 0) return new Set();
  const { rows } = await sql<QueueRef>`
    select distinct q.endpoint_id, q.delivery_id
    from unnest(${queues.map((q) => q.endpoint_id)}::uuid[], ${queues.map((q) => q.delivery_id)}::bigint[])
      as q(endpoint_id, delivery_id)
    where exists (select 1 from messages m
      where m.endpoint_id = q.endpoint_id and m.delivery_id = q.delivery_id and m.state = 'pending')
  `.execute(tx);
  return new Set(rows.map(queueKey));
}

export const queueKey = (queue: QueueRef) => `${queue.endpoint_id}/${queue.delivery_id}`;

/** A message claimed by its partition's owner, with what it needs to send it. */
export interface ClaimedMessage {
  id: number;
  account_id: number;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  delivery_id: number;
  sequence: number;
  partition: number;
  attempts: number;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  body: string;
  traceparent: string | null;
  /** The claim's token: recording the attempt needs it still to be the message's. */
  lease_token: string;
}

/**
 * Leases due queue heads of the partitions given, skipping those being sent here, fairly between
 * accounts: each account's earliest due heads, up to its room (`accountLimit` less what it has
 * in flight here, `busy`), the accounts taking turns (every account's first, then every
 * account's second, ...), `limit` in all. The accounts come from a loose index scan of
 * `messages_due_by_account` (one probe per account with queue heads in the partition), so an
 * account's deep backlog costs its own probe, not a scan that others wait behind. The lease only
 * marks a message as taken: a partition has one owner, and a new owner clears its leases
 * (`clearLeases`).
 */
export async function claimDue(
  db: Db,
  claim: {
    partitions: number[];
    limit: number;
    accountLimit: number;
    /** Messages in flight here, by account. */
    busy: Map<number, number>;
    sending: number[];
    leaseMs: number;
  },
): Promise<ClaimedMessage[]> {
  const { partitions, limit, accountLimit, busy, sending, leaseMs } = claim;
  if (partitions.length === 0 || limit <= 0) return [];
  const heads = sql`m.state = 'pending' and m.next_attempt_at is not null`;
  const { rows } = await sql<ClaimedMessage>`
    with recursive accounts (partition, account_id) as (
      select p, (select min(m.account_id) from messages m where m.partition = p and ${heads})
      from unnest(${partitions}::smallint[]) as p
      union all
      select a.partition, (select m.account_id from messages m
        where m.partition = a.partition and m.account_id > a.account_id and ${heads}
        order by m.account_id limit 1)
      from accounts a where a.account_id is not null
    ),
    busy (account_id, n) as (
      select * from unnest(${[...busy.keys()]}::bigint[], ${[...busy.values()]}::int[])
    ),
    candidates as (
      select c.id, c.next_attempt_at, c.turn, coalesce(b.n, 0) as busy
      from accounts a
      cross join lateral (
        select m.id, m.next_attempt_at, row_number() over (order by m.next_attempt_at) as turn
        from messages m
        where m.partition = a.partition and m.account_id = a.account_id and ${heads}
          and m.next_attempt_at <= now() and (m.lease_until is null or m.lease_until <= now())
          and m.id <> all(${sending}::bigint[])
        order by m.next_attempt_at
        limit ${accountLimit}
      ) c
      left join busy b on b.account_id = a.account_id
      where a.account_id is not null
    ),
    due as (
      select m.id from messages m
      where m.id in (
        select id from candidates where busy + turn <= ${accountLimit}
        order by turn, next_attempt_at limit ${limit}
      )
      for update of m skip locked
    )
    update messages m
    set lease_until = now() + make_interval(secs => ${leaseMs / 1000}::float8), lease_token = gen_random_uuid()
    from due, endpoints e, events ev
    where m.id = due.id and e.id = m.endpoint_id and ev.id = m.event_id
      and e.status = 'enabled' and e.deleted_at is null
    returning m.id, m.account_id, m.endpoint_id, m.event_id, ev.type as event_type, m.delivery_id, m.sequence,
      m.partition, m.attempts, e.url, e.secret_ciphertext, e.previous_secret_ciphertext,
      e.previous_secret_expires_at, ev.body, ev.traceparent, m.lease_token
  `.execute(db);
  return rows;
}

/** Clears the leases of a partition's messages: its new owner sends whatever they held. */
export async function clearLeases(db: Db, partition: number): Promise<void> {
  await sql`
    update messages set lease_until = null, lease_token = null
    where partition = ${partition} and state = 'pending' and lease_until is not null
  `.execute(db);
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
