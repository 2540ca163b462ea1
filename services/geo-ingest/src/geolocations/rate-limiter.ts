/**
 * The spec's limit: one request per second per tracker, the tracker being the device linked to
 * the vehicle. The key is therefore the vehicle External ID (what the fleet says exists), never
 * the caller-chosen `tracker_id`, which would multiply the budget. A refused request does
 * not move the schedule, so a tracker that slows down to the limit is never starved. The caller
 * takes a slot only once the request has passed every other check. The state lives in this
 * process: the limit is exact when every request of a vehicle reaches the same replica (see the
 * README: consistent hashing on the vehicle id at the ingress).
 */

/** How early a request may come against its vehicle's schedule, as a share of the interval. */
const JITTER_SHARE = 0.5;

/** An allowed request's slot: `due` is when the vehicle's next request is due, `previous` what it was. */
export interface Slot {
  due: number;
  previous: number | undefined;
}

export type RateDecision = ({ allowed: true } & Slot) | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  take(key: string, now: number): RateDecision;
  /** Gives the slot back when the request was not served after all, so it used none of the budget. */
  refund(key: string, slot: Slot): void;
  /** Vehicles remembered (a vehicle seen in both generations counts twice). */
  readonly size: number;
}

/**
 * A schedule per vehicle (the generic cell rate algorithm): each allowed request moves the
 * vehicle's next due time one interval past the later of its previous due time and now, and a
 * request is allowed from half an interval before it is due. A tracker sending once a second by
 * its own clock is thus not refused for network or queueing jitter of up to half a second (a
 * request that arrives 700 ms after the previous one because that one was delayed), while over
 * any stretch of time the vehicle is allowed no more than one request per interval, plus one.
 *
 * Vehicles are remembered in two generations: `recent` holds the requests allowed since the last
 * turn, `older` those of the turn before. A turn happens once `intervalMs` have passed since the
 * previous one, and drops the generation before `older`: every request in it was allowed at least
 * `intervalMs` ago, so its due time less the tolerance has passed and it can refuse nothing.
 * Forgetting is then one map dropped per interval, not a sweep over every vehicle (tens of
 * thousands each second) that stalls the event loop.
 */
export function createRateLimiter(intervalMs: number): RateLimiter {
  const toleranceMs = intervalMs * JITTER_SHARE;
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
      if (previous !== undefined && now < previous - toleranceMs) {
        return { allowed: false, retryAfterMs: previous - toleranceMs - now };
      }
      const due = (previous !== undefined && previous > now ? previous : now) + intervalMs;
      recent.set(key, due);
      return { allowed: true, due, previous };
    },
    refund(key, slot) {
      // The slot was taken in `recent`, or in what a turn since has made `older`.
      const generation = recent.get(key) === slot.due ? recent : older.get(key) === slot.due ? older : undefined;
      if (generation === undefined) return;
      if (slot.previous === undefined) generation.delete(key);
      else generation.set(key, slot.previous);
    },
    get size() {
      return recent.size + older.size;
    },
  };
}
