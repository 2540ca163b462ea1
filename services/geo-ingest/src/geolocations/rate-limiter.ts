/**
 * The spec's limit: one request per second per tracker. A request is allowed when at least
 * `intervalMs` have passed since the tracker's last allowed request; a refused request does not
 * move the window, so a tracker that slows down to the limit is never starved. The state lives
 * in this process: the limit is exact when every request of a vehicle reaches the same replica
 * (see the README: consistent hashing on the vehicle id at the ingress).
 */

export type RateDecision = { allowed: true; previous: number | undefined } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  take(key: string, now: number): RateDecision;
  /** Gives the slot back when the request could not be served (503), so the retry is not a 429. */
  refund(key: string, takenAt: number, previous: number | undefined): void;
  readonly size: number;
  stop(): void;
}

/** The tracker a request comes from: its vehicle, and the tracker id when the body names one. */
export function trackerKey(vehicleExternalId: string, trackerId: number | null | undefined): string {
  return trackerId == null ? vehicleExternalId : `${vehicleExternalId}\u0000${trackerId}`;
}

export function createRateLimiter(intervalMs: number): RateLimiter {
  const lastAllowed = new Map<string, number>();
  // Forget trackers whose window has passed, so memory follows the trackers active right now.
  const sweeper = setInterval(
    () => {
      const horizon = Date.now() - intervalMs;
      for (const [key, at] of lastAllowed) if (at <= horizon) lastAllowed.delete(key);
    },
    Math.max(5000, intervalMs * 5),
  );
  sweeper.unref();

  return {
    take(key, now) {
      const previous = lastAllowed.get(key);
      if (previous !== undefined && now - previous < intervalMs) {
        return { allowed: false, retryAfterMs: previous + intervalMs - now };
      }
      lastAllowed.set(key, now);
      return { allowed: true, previous };
    },
    refund(key, takenAt, previous) {
      if (lastAllowed.get(key) !== takenAt) return;
      if (previous === undefined) lastAllowed.delete(key);
      else lastAllowed.set(key, previous);
    },
    get size() {
      return lastAllowed.size;
    },
    stop() {
      clearInterval(sweeper);
    },
  };
}
