/**
 * Records failed attempts, a batch per transaction: the attempt log rows, the messages' new
 * states, the endpoints' health (a 410 or a failure run longer than the limit disables the
 * endpoint and dead-letters its pending messages) and the next head of each queue that moved.
 * Delivered attempts, the common case, are recorded by `finishAndClaim` in the worker's cycle.
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { PostResult } from "../delivery-http/webhook-client.ts";
import {
  type ClaimedMessage,
  deadLetterPending,
  lockQueuePairs,
  relaxDurability,
  settleQueuePairs,
} from "../queue/queue.repository.ts";
import type { AttemptDecision } from "./retry-policy.ts";

export interface AttemptInput {
  /** Recorded only while its lease token is still the message's: one leased anew is left alone. */
  message: ClaimedMessage;
  attemptedAt: Date;
  result: PostResult;
  decision: AttemptDecision;
}

export interface RecordedAttempt {
  /** The outcome written, after the endpoint's health had its say. */
  outcome: AttemptDecision["outcome"];
  /** Why the endpoint was disabled by this attempt, if it was. */
  disabledReason: string | null;
  /** Other pending messages dead-lettered because the endpoint was disabled. */
  alsoDeadLettered: number;
}

/** Records a batch of failed attempts in the transaction; answers in the order given. */
export async function recordFailures(
  tx: Db,
  inputs: AttemptInput[],
  disableAfterMs: number,
): Promise<RecordedAttempt[]> {
  await relaxDurability(tx);
  await lockQueuePairs(
    tx,
    inputs.map((i) => i.message),
  );
  // Endpoint rows are locked in id order, so two batches never wait on each other in a circle.
  const sorted = [...inputs].sort((a, b) => (a.message.endpoint_id < b.message.endpoint_id ? -1 : 1));
  const results = new Map<AttemptInput, RecordedAttempt>();
  for (const input of sorted) results.set(input, await recordFailure(tx, input, disableAfterMs));
  await settleQueuePairs(
    tx,
    inputs.filter((i) => results.get(i)?.outcome !== "retrying").map((i) => i.message),
  );
  return inputs.map((i) => results.get(i) as RecordedAttempt);
}

async function recordFailure(tx: Db, input: AttemptInput, disableAfterMs: number): Promise<RecordedAttempt> {
  const { message, attemptedAt } = input;
  let decision = input.decision;
  const endpoint = await tx
    .updateTable("endpoints")
    .set({ failing_since: sql<Date>`coalesce(failing_since, ${attemptedAt})` })
    .where("id", "=", message.endpoint_id)
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
      .where("id", "=", message.endpoint_id)
      .execute();
  } else {
    disabledReason = null;
  }

  const nextAttemptAt = decision.outcome === "retrying" ? new Date(Date.now() + decision.delayMs) : null;
  await tx
    .updateTable("messages")
    .set({
      attempts: sql<number>`attempts + 1`,
      lease_until: null,
      lease_token: null,
      state: decision.outcome === "dead_lettered" ? "dead" : "pending",
      next_attempt_at: nextAttemptAt,
      finished_at: decision.outcome === "dead_lettered" ? attemptedAt : null,
      dead_reason: decision.outcome === "dead_lettered" ? decision.reason : null,
    })
    .where("id", "=", message.id)
    .where("lease_token", "=", message.lease_token)
    .where("state", "=", "pending")
    .execute();
  const outcome = decision.outcome === "delivered" ? "retrying" : decision.outcome;
  await tx
    .insertInto("attempts")
    .values({
      message_id: message.id,
      endpoint_id: message.endpoint_id,
      attempt: message.attempts + 1,
      attempted_at: attemptedAt,
      duration_ms: input.result.durationMs,
      status_code: input.result.statusCode,
      error: input.result.error,
      outcome,
      next_attempt_at: nextAttemptAt,
    })
    .execute();
  const alsoDeadLettered = disabledReason
    ? await deadLetterPending(tx, message.endpoint_id, `endpoint disabled: ${disabledReason}`)
    : 0;
  return { outcome, disabledReason, alsoDeadLettered };
}

/** "5 days", "3 h", "12 min", "40 s": how long an endpoint has been failing, for its disabled reason. */
export function formatDuration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, " days"],
    [3_600_000, " h"],
    [60_000, " min"],
  ];
  for (const [size, label] of units) if (ms >= size) return `${Math.floor(ms / size)}${label}`;
  return `${Math.floor(ms / 1000)} s`;
}

/** The stored trace contexts of events (those that have one), by event id. */
export async function eventTraceparents(db: Db, eventIds: string[]): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom("events")
    .select(["id", "traceparent"])
    .where("id", "in", eventIds)
    .where("traceparent", "is not", null)
    .execute();
  return new Map(rows.map((row) => [row.id, row.traceparent as string]));
}
