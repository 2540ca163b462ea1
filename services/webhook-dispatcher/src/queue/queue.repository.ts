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
 * Takes the advisory locks of queues (`lock_queues`, migration 0002), always in one global
 * order, so two transactions locking several queues never deadlock. Re-entrant in a transaction.
 */
export async function lockQueuePairs(tx: Db, queues: QueueRef[]): Promise<void> {
  if (queues.length === 0) return;
  await sql`select lock_queues(${queues.map((q) => q.endpoint_id)}::uuid[], ${queues.map((q) => q.delivery_id)}::bigint[])`.execute(
    tx,
  );
}

/** Takes the advisory locks of the queues of one endpoint. */
export async function lockQueues(tx: Db, endpointId: string, deliveryIds: number[]): Promise<void> {
  await lockQueuePairs(
    tx,
    deliveryIds.map((delivery_id) => ({ endpoint_id: endpointId, delivery_id })),
  );
}

/**
 * Settles the queues given (`settle_queues`, migration 0002): the lowest pending message of each
 * becomes its head, unless the current head has already been tried or is being sent.
 */
export async function settleQueuePairs(tx: Db, queues: QueueRef[]): Promise<void> {
  if (queues.length === 0) return;
  await sql`select settle_queues(${queues.map((q) => q.endpoint_id)}::uuid[], ${queues.map((q) => q.delivery_id)}::bigint[])`.execute(
    tx,
  );
}

/** Settles the queues of one endpoint. */
export async function settleQueues(tx: Db, endpointId: string, deliveryIds: number[]): Promise<void> {
  await settleQueuePairs(
    tx,
    deliveryIds.map((delivery_id) => ({ endpoint_id: endpointId, delivery_id })),
  );
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
  /** The slot's lease token: recording the attempt needs it still to be the message's. */
  lease_token: string;
  /** Place in the slot's sending order, from 0. */
  slot_position: number;
}

/** A delivered attempt, to be recorded by `finishAndClaim`. */
export interface DeliveredAttempt {
  message: ClaimedMessage;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number;
}

export interface ClaimOptions {
  /** Slots to open at most: POSTs this process may start at once. */
  slots: number;
  /** Slots per endpoint (POSTs in flight to it), counted over every replica's leases. */
  perEndpoint: number;
  /** Messages per slot at most, sent one after the other. */
  perSlot: number;
  /** Lease of a slot's first message; each later one gets `stepMs` more. */
  leaseMs: number;
  stepMs: number;
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

/**
 * One worker cycle in one round trip (`finish_and_claim`, migrations 0002 and 0010): leases due
 * heads of enabled endpoints for the free slots, oldest first (see `claim_due`), then records the
 * delivered attempts and leases the next message of each of their queues to the slot that
 * delivered (`continue_queues`); the other queues move to their next heads. Returns both kinds of
 * leased messages. Commits relaxed (see relaxDurability).
 */
export async function finishAndClaim(
  db: Db,
  delivered: DeliveredAttempt[],
  /** The slots (lease tokens) to continue with the next message of their queues. */
  continuing: ReadonlySet<string>,
  options: ClaimOptions,
): Promise<ClaimedMessage[]> {
  const column = <T>(pick: (d: DeliveredAttempt) => T) => delivered.map(pick);
  const { rows } = await sql<ClaimedMessage>`
    select * from finish_and_claim(
      ${column((d) => d.message.id)}::bigint[], ${column((d) => d.message.lease_token)}::uuid[],
      ${column((d) => d.message.endpoint_id)}::uuid[], ${column((d) => d.message.delivery_id)}::bigint[],
      ${column((d) => d.message.attempts + 1)}::int[], ${column((d) => d.attemptedAt.toISOString())}::timestamptz[],
      ${column((d) => d.durationMs)}::int[], ${column((d) => d.statusCode)}::int[],
      ${column((d) => (continuing.has(d.message.lease_token) ? d.message.lease_token : null))}::uuid[],
      ${options.slots}::int, ${options.perEndpoint}::int, ${options.perSlot}::int, ${options.leaseMs}::float8,
      ${options.stepMs}::float8)
  `.execute(db);
  return rows;
}

/** Gives back the leases of messages leased and not sent (the worker stops): others may take them at once. */
export async function releaseLeases(db: Db, messages: ClaimedMessage[]): Promise<void> {
  await sql`
    update messages m set lease_until = null, lease_token = null
    from unnest(${messages.map((m) => m.id)}::bigint[], ${messages.map((m) => m.lease_token)}::uuid[]) as x(id, token)
    where m.id = any(${messages.map((m) => m.id)}::bigint[]) and m.id = x.id and m.lease_token = x.token
      and m.state = 'pending'
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
