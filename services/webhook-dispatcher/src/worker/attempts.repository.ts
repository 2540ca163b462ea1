/**
 * The attempt log. A webhook delivered straight from the stream leaves only its attempt row,
 * written in batches (`logDelivered`). An attempt of a queued message is recorded with the
 * message: delivered (`recordQueuedDelivered`: the queue's next message becomes its head), or
 * failed (`recordFailures`: the message's new state, the endpoint's health — a 410 or a failure
 * run longer than the limit disables the endpoint and dead-letters its pending messages — and
 * the next head of each queue that moved).
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { type ClaimedMessage, deadLetterPending, lockQueues, settleQueues } from "../queue/queue.repository.ts";
import type { AttemptDecision } from "./retry-policy.ts";
import type { SentAttempt } from "./sender.ts";

/** The event an attempt was about, as the attempt log shows it. */
export interface AttemptedEvent {
  endpointId: string;
  eventId: string;
  eventType: string;
  deliveryId: number;
  sequence: number;
}

/** A delivered attempt (2xx). */
export interface DeliveredAttempt extends AttemptedEvent {
  /** The queued message tried; null for a webhook sent straight from the stream. */
  messageId: number | null;
  /** This attempt's number, 1 for the first. */
  attempt: number;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number;
}

/** Logs delivered attempts in one statement; their endpoints' failure runs end. */
export async function logDelivered(db: Db, attempts: DeliveredAttempt[]): Promise<void> {
  if (attempts.length === 0) return;
  const column = <T>(pick: (a: DeliveredAttempt) => T) => attempts.map(pick);
  await sql`
    with logged as (
      insert into attempts (message_id, endpoint_id, event_id, event_type, delivery_id, sequence, attempt,
        attempted_at, duration_ms, status_code, outcome)
      select x.message, x.endpoint, x.event, x.type, x.delivery, x.sequence, x.attempt, x.at, x.ms, x.status,
        'delivered'
      from unnest(${column((a) => a.messageId)}::bigint[], ${column((a) => a.endpointId)}::uuid[],
        ${column((a) => a.eventId)}::uuid[], ${column((a) => a.eventType)}::text[],
        ${column((a) => a.deliveryId)}::bigint[], ${column((a) => a.sequence)}::int[],
        ${column((a) => a.attempt)}::int[], ${column((a) => a.attemptedAt.toISOString())}::timestamptz[],
        ${column((a) => a.durationMs)}::int[], ${column((a) => a.statusCode)}::int[])
        as x(message, endpoint, event, type, delivery, sequence, attempt, at, ms, status)
    )
    update endpoints set failing_since = null
    where id = any(${column((a) => a.endpointId)}::uuid[]) and failing_since is not null
  `.execute(db);
}

/**
 * Records queued messages delivered: the messages (still claimed with their claim's token) are
 * done, the attempts logged, and the next message of each queue becomes its head.
 */
export async function recordQueuedDelivered(
  tx: Db,
  delivered: Array<{ message: ClaimedMessage; attempt: DeliveredAttempt }>,
): Promise<void> {
  if (delivered.length === 0) return;
  const queues = delivered.map((d) => d.message);
  await lockQueues(tx, queues);
  await sql`
    update messages m
    set attempts = x.attempt, lease_until = null, lease_token = null, state = 'delivered',
        next_attempt_at = null, finished_at = x.at
    from unnest(${delivered.map((d) => d.message.id)}::bigint[], ${delivered.map((d) => d.message.lease_token)}::uuid[],
      ${delivered.map((d) => d.attempt.attempt)}::int[],
      ${delivered.map((d) => d.attempt.attemptedAt.toISOString())}::timestamptz[]) as x(id, token, attempt, at)
    where m.id = x.id and m.lease_token = x.token and m.state = 'pending'
  `.execute(tx);
  await logDelivered(
    tx,
    delivered.map((d) => d.attempt),
  );
  await settleQueues(tx, queues);
}

/** A failed attempt of a queued message. */
export interface FailedAttempt extends AttemptedEvent {
  messageId: number;
  /** The claim's token; null for a message queued by this very transaction. */
  leaseToken: string | null;
  /** This attempt's number, 1 for the first. */
  attempt: number;
  sent: SentAttempt;
}

export interface RecordedAttempt {
  /** The outcome written, after the endpoint's health had its say. */
  outcome: Exclude<AttemptDecision["outcome"], "delivered">;
  /** Why the endpoint was disabled by this attempt, if it was. */
  disabledReason: string | null;
  /** Other pending messages dead-lettered because the endpoint was disabled. */
  alsoDeadLettered: number;
}

/** Records failed attempts in the transaction; answers in the order given. */
export async function recordFailures(
  tx: Db,
  failures: FailedAttempt[],
  disableAfterMs: number,
): Promise<RecordedAttempt[]> {
  const queueOf = (f: FailedAttempt) => ({ endpoint_id: f.endpointId, delivery_id: f.deliveryId });
  await lockQueues(tx, failures.map(queueOf));
  // Endpoint rows are locked in id order, so two batches never wait on each other in a circle.
  const sorted = [...failures].sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
  const results = new Map<FailedAttempt, RecordedAttempt>();
  for (const failure of sorted) results.set(failure, await recordFailure(tx, failure, disableAfterMs));
  await settleQueues(tx, failures.filter((f) => results.get(f)?.outcome !== "retrying").map(queueOf));
  return failures.map((f) => results.get(f) as RecordedAttempt);
}

async function recordFailure(tx: Db, failure: FailedAttempt, disableAfterMs: number): Promise<RecordedAttempt> {
  const { attemptedAt, result } = failure.sent;
  let decision = failure.sent.decision;
  const endpoint = await tx
    .updateTable("endpoints")
    .set({ failing_since: sql<Date>`coalesce(failing_since, ${attemptedAt})` })
    .where("id", "=", failure.endpointId)
    .returning(["failing_since", "status"])
    .executeTakeFirstOrThrow();
  const failingMs = attemptedAt.getTime() - (endpoint.failing_since ?? attemptedAt).getTime();
  let disabledReason: string | null = null;
  if (decision.outcome === "dead_lettered" && decision.disableEndpoint) {
    disabledReason = decision.disableEndpoint;
  } else if (failingMs >= disableAfterMs) {
    disabledReason = `no successful attempt for ${formatDuration(failingMs)}`;
    decision = { outcome: "dead_lettered", reason: `endpoint disabled: ${disabledReason}` };
  }
  if (disabledReason && endpoint.status === "enabled") {
    await tx
      .updateTable("endpoints")
      .set({ status: "disabled", disabled_reason: disabledReason, disabled_at: attemptedAt })
      .where("id", "=", failure.endpointId)
      .execute();
  } else {
    disabledReason = null;
  }

  const outcome = decision.outcome === "dead_lettered" ? "dead_lettered" : "retrying";
  const nextAttemptAt = decision.outcome === "retrying" ? new Date(Date.now() + decision.delayMs) : null;
  await tx
    .updateTable("messages")
    .set({
      attempts: failure.attempt,
      lease_until: null,
      lease_token: null,
      state: outcome === "dead_lettered" ? "dead" : "pending",
      next_attempt_at: nextAttemptAt,
      finished_at: outcome === "dead_lettered" ? attemptedAt : null,
      dead_reason: decision.outcome === "dead_lettered" ? decision.reason : null,
    })
    .where("id", "=", failure.messageId)
    .where("state", "=", "pending")
    .where((eb) =>
      failure.leaseToken === null ? eb("lease_token", "is", null) : eb("lease_token", "=", failure.leaseToken),
    )
    .execute();
  await tx
    .insertInto("attempts")
    .values({
      message_id: failure.messageId,
      endpoint_id: failure.endpointId,
      event_id: failure.eventId,
      event_type: failure.eventType,
      delivery_id: failure.deliveryId,
      sequence: failure.sequence,
      attempt: failure.attempt,
      attempted_at: attemptedAt,
      duration_ms: result.durationMs,
      status_code: result.statusCode,
      error: result.error,
      outcome,
      next_attempt_at: nextAttemptAt,
    })
    .execute();
  const alsoDeadLettered = disabledReason
    ? await deadLetterPending(tx, failure.endpointId, `endpoint disabled: ${disabledReason}`)
    : 0;
  return { outcome, disabledReason, alsoDeadLettered };
}

/** "5 days", "3 h", "12 min", "40 s": how long an endpoint has been failing, for its disabled reason. */
function formatDuration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, " days"],
    [3_600_000, " h"],
    [60_000, " min"],
  ];
  for (const [size, label] of units) if (ms >= size) return `${Math.floor(ms / size)}${label}`;
  return `${Math.floor(ms / 1000)} s`;
}
