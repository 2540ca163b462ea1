/**
 * Records one attempt in one transaction: the attempt log row, the message's new state, the
 * endpoint's health (a success clears its failure run; a 410 or a failure run longer than the
 * limit disables it and dead-letters its pending messages) and the next head of the queue.
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { PostResult } from "../delivery-http/webhook-client.ts";
import { type ClaimedMessage, deadLetterPending, lockQueues, settleQueues } from "../queue/queue.repository.ts";
import type { AttemptDecision } from "./retry-policy.ts";

export interface RecordedAttempt {
  /** The outcome written, after the endpoint's health had its say. */
  outcome: AttemptDecision["outcome"];
  /** Why the endpoint was disabled by this attempt, if it was. */
  disabledReason: string | null;
  /** Other pending messages dead-lettered because the endpoint was disabled. */
  alsoDeadLettered: number;
}

export async function recordAttempt(
  tx: Db,
  input: {
    message: ClaimedMessage;
    token: string;
    attemptedAt: Date;
    result: PostResult;
    decision: AttemptDecision;
    disableAfterMs: number;
  },
): Promise<RecordedAttempt> {
  const { message, result, attemptedAt } = input;
  let decision = input.decision;
  await lockQueues(tx, message.endpoint_id, [message.delivery_id]);

  // The endpoint row is locked before any message row, as disabling does, so two attempts never deadlock.
  let disabledReason: string | null = null;
  if (decision.outcome === "delivered") {
    await tx
      .updateTable("endpoints")
      .set({ failing_since: null })
      .where("id", "=", message.endpoint_id)
      .where("failing_since", "is not", null)
      .execute();
  } else {
    const endpoint = await tx
      .updateTable("endpoints")
      .set({ failing_since: sql<Date>`coalesce(failing_since, ${attemptedAt})` })
      .where("id", "=", message.endpoint_id)
      .returning(["failing_since", "status"])
      .executeTakeFirstOrThrow();
    const failingMs = attemptedAt.getTime() - (endpoint.failing_since ?? attemptedAt).getTime();
    if (decision.outcome === "dead_lettered" && decision.disableEndpoint) {
      disabledReason = decision.disableEndpoint;
    } else if (failingMs >= input.disableAfterMs) {
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
  }

  const finished = decision.outcome !== "retrying";
  const nextAttemptAt = decision.outcome === "retrying" ? new Date(Date.now() + decision.delayMs) : null;
  await tx
    .updateTable("messages")
    .set({
      attempts: sql<number>`attempts + 1`,
      lease_until: null,
      lease_token: null,
      state: decision.outcome === "delivered" ? "delivered" : decision.outcome === "dead_lettered" ? "dead" : "pending",
      next_attempt_at: nextAttemptAt,
      finished_at: finished ? attemptedAt : null,
      dead_reason: decision.outcome === "dead_lettered" ? decision.reason : null,
    })
    .where("id", "=", message.id)
    .where("lease_token", "=", input.token)
    .where("state", "=", "pending")
    .execute();
  await tx
    .insertInto("attempts")
    .values({
      message_id: message.id,
      endpoint_id: message.endpoint_id,
      attempt: message.attempts + 1,
      attempted_at: attemptedAt,
      duration_ms: result.durationMs,
      status_code: result.statusCode,
      error: result.error,
      outcome: decision.outcome,
      next_attempt_at: nextAttemptAt,
    })
    .execute();
  const alsoDeadLettered = disabledReason
    ? await deadLetterPending(tx, message.endpoint_id, `endpoint disabled: ${disabledReason}`)
    : 0;
  if (finished) await settleQueues(tx, message.endpoint_id, [message.delivery_id]);
  return { outcome: decision.outcome, disabledReason, alsoDeadLettered };
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
