/**
 * What follows an attempt: delivered (2xx), retried after the schedule's next delay (spread by
 * jitter, and never sooner than a 429/503's Retry-After), or dead-lettered after the last one.
 * A 410 Gone disables the endpoint at once.
 */
import type { PostResult } from "../delivery-http/webhook-client.ts";

export interface RetryPolicy {
  /** Delay before each attempt, in ms; its length is the number of attempts. */
  scheduleMs: number[];
  jitter: number;
  retryAfterMaxMs: number;
}

export type AttemptDecision =
  | { outcome: "delivered" }
  | { outcome: "retrying"; delayMs: number }
  | { outcome: "dead_lettered"; reason: string; disableEndpoint?: string };

/** Decides after attempt number `attempt` (1 for the first) with the given result. */
export function decideAfterAttempt(
  policy: RetryPolicy,
  attempt: number,
  result: PostResult,
  random: () => number = Math.random,
): AttemptDecision {
  const status = result.statusCode;
  if (status !== null && status >= 200 && status < 300) return { outcome: "delivered" };
  if (status === 410) {
    return {
      outcome: "dead_lettered",
      reason: "endpoint answered 410 Gone",
      disableEndpoint: "endpoint answered 410 Gone",
    };
  }
  if (attempt >= policy.scheduleMs.length) {
    return { outcome: "dead_lettered", reason: `no success after ${attempt} attempts` };
  }
  const base = policy.scheduleMs[attempt] ?? 0;
  let delayMs = Math.round(base * (1 + policy.jitter * (2 * random() - 1)));
  if ((status === 429 || status === 503) && result.retryAfterMs !== null) {
    delayMs = Math.max(delayMs, Math.min(result.retryAfterMs, policy.retryAfterMaxMs));
  }
  return { outcome: "retrying", delayMs: Math.max(0, delayMs) };
}
