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
  /** Trackers remembered (a tracker seen in both generations counts twice). */
  readonly size: number;
}

/** The tracker a request comes from: its vehicle, and the tracker id when the body names one. */
export function trackerKey(vehicleExternalId: string, trackerId: number | null | undefined): string {
  return trackerId == null ? vehicleExternalId : `${vehicleExternalId}\u0000${trackerId}`;
}

/**
 * Trackers are remembered in two generations: `recent` holds the requests allowed since the last
 * turn, `older` those of the turn before. A turn happens once `intervalMs` have passed since the
 * previous one, and drops the generation before `older`: every request in it was allowed at least
 * `intervalMs` ago, so it can refuse nothing. Forgetting is then one map dropped per interval,
 * not a sweep over every tracker (tens of thousands each second) that stalls the event loop.
 */
export function createRateLimiter(intervalMs: number): RateLimiter {
  let recent = new Map<string, number>();
  let older = new Map<string, number>();
  let turnedAt = Number.NEGATIVE_INFINITY;

  return {
    take(key, now) {
      if (now - turnedAt >= intervalMs) {
        older = recent;
        recent = new Map();
        turnedAt = now;
      }
      const previous = recent.get(key) ?? older.get(key);
      if (previous !== undefined && now - previous < intervalMs) {
        return { allowed: false, retryAfterMs: previous + intervalMs - now };
      }
      recent.set(key, now);
      return { allowed: true, previous };
    },
    refund(key, takenAt, previous) {
      // The slot was taken in `recent`, or in what a turn since has made `older`.
      const generation = recent.get(key) === takenAt ? recent : older.get(key) === takenAt ? older : undefined;
      if (generation === undefined) return;
      if (previous === undefined) generation.delete(key);
      else generation.set(key, previous);
    },
    get size() {
      return recent.size + older.size;
    },
  };
}
