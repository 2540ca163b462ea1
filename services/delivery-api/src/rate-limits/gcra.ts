/**
 * The generic cell rate algorithm (GCRA): a token bucket held as one number, the theoretical
 * arrival time (TAT) of the next request. A policy of `quota` requests per `windowSeconds`
 * lets `quota` requests through at once, then one every `windowSeconds / quota` seconds; the
 * bucket is full again once the TAT is in the past. One number makes it cheap to share
 * between replicas (one compare-and-set) and to mirror (a stale TAT is never too high).
 */

/** A limit as the RateLimit-Policy header states it: `quota` requests per `windowSeconds`. */
export interface RatePolicy {
  quota: number;
  windowSeconds: number;
}

/** What one request was granted, and what the headers tell about the bucket after it. */
export interface Decision {
  allowed: boolean;
  /** Requests that could be sent now, after this one. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
  /** For a refusal: milliseconds until one request would be allowed. */
  retryAfterMs: number;
}

/** Applies `count` requests arriving at `now` to the TAT: each decision in order, and the new TAT. */
export function applyRequests(
  tat: number,
  now: number,
  policy: RatePolicy,
  count: number,
): { decisions: Decision[]; tat: number } {
  const windowMs = policy.windowSeconds * 1000;
  const intervalMs = windowMs / policy.quota;
  const decisions: Decision[] = [];
  let current = tat;
  for (let i = 0; i < count; i++) {
    const start = Math.max(current, now);
    const next = start + intervalMs;
    if (next - now <= windowMs + 1e-6) {
      current = next;
      decisions.push({ allowed: true, ...bucketAfter(current, now, windowMs, intervalMs), retryAfterMs: 0 });
    } else {
      decisions.push({
        allowed: false,
        remaining: 0,
        resetMs: start - now,
        retryAfterMs: next - windowMs - now,
      });
    }
  }
  return { decisions, tat: current };
}

/** The emission interval of a policy: one request per this many milliseconds, sustained. */
export const intervalOf = (policy: RatePolicy) => (policy.windowSeconds * 1000) / policy.quota;

/**
 * A TAT written under another policy (an operator changed the account's), as this one reads
 * it: the requests it stands for are kept, each now worth this policy's interval, and never
 * more than a full bucket. Raising a limit thus gives the room at once, lowering it takes
 * only what was not used.
 */
export function rescale(tat: number, writtenIntervalMs: number, now: number, policy: RatePolicy): number {
  const intervalMs = intervalOf(policy);
  if (tat <= now || writtenIntervalMs === intervalMs) return tat;
  const used = (tat - now) / writtenIntervalMs;
  return now + Math.min(used * intervalMs, policy.windowSeconds * 1000);
}

/** Whether a request at `now` would be refused with this TAT: the check a mirror can make alone. */
export function refusal(tat: number, now: number, policy: RatePolicy): Decision | null {
  const [decision] = applyRequests(tat, now, policy, 1).decisions;
  return decision?.allowed === false ? decision : null;
}

function bucketAfter(tat: number, now: number, windowMs: number, intervalMs: number) {
  const used = tat - now;
  return { remaining: Math.max(0, Math.floor((windowMs - used + 1e-6) / intervalMs)), resetMs: used };
}
