/**
 * Where a round's messenger is and when they reach the next task. A round has up to two latest
 * positions: its vehicle's tracker (from geo-ingest) and the messenger's phone (operator API).
 * A tracker position younger than API_TRACKER_FRESH_MS replaces the phone's (spec); otherwise
 * the newer of the two counts. Each new position recomputes the next task's ETA, at most every
 * API_ETA_MIN_INTERVAL_MS per task.
 */
import type { Kysely } from "kysely";
import type { Config } from "../../config.ts";
import type { DB, Db } from "../../db/database.ts";
import { activeRoundsOfVehicles } from "../rounds/rounds.repository.ts";
import { estimateArrival, type Point } from "./geo.ts";
import {
  type NewPosition,
  nextTaskOfRound,
  roundPositions,
  roundsWithEtaDue,
  storeEta,
  upsertPositions,
} from "./positions.repository.ts";
import type { PositionSource } from "./positions.table.ts";

export interface CurrentPosition extends Point {
  source: PositionSource;
  recorded_at: Date;
}

/** A tracker position as geo-ingest publishes it: its vehicle's round at the time. */
export interface TrackerPosition extends Point {
  roundId: number;
  vehicleExternalId: string;
  recordedAt: Date;
}

/** The spec's rule between a round's tracker and phone positions (see the top of this file). */
export function choosePosition(rows: CurrentPosition[], now: Date, trackerFreshMs: number): CurrentPosition | null {
  const tracker = rows.find((r) => r.source === "tracker");
  const phone = rows.find((r) => r.source === "phone");
  const fresh = tracker && now.getTime() - tracker.recorded_at.getTime() <= trackerFreshMs;
  const chosen = fresh || !phone ? tracker : !tracker || phone.recorded_at > tracker.recorded_at ? phone : tracker;
  return chosen
    ? { source: chosen.source, latitude: chosen.latitude, longitude: chosen.longitude, recorded_at: chosen.recorded_at }
    : null;
}

export function createPositionsService(db: Kysely<DB>, config: Config) {
  const rule = { speedKmh: config.API_ETA_SPEED_KMH, stopMinutes: config.API_ETA_STOP_MINUTES };

  /** The current position of each of these rounds that has one: one query however many rounds. */
  async function currentOfRounds(trx: Db, roundIds: number[], now = new Date()) {
    const current = new Map<number, CurrentPosition>();
    if (roundIds.length === 0) return current;
    const byRound = Map.groupBy(await roundPositions(trx, roundIds), (r) => r.round_id);
    for (const [roundId, rows] of byRound) {
      const chosen = choosePosition(rows, now, config.API_TRACKER_FRESH_MS);
      if (chosen) current.set(roundId, chosen);
    }
    return current;
  }

  async function current(trx: Db, roundId: number, now = new Date()): Promise<CurrentPosition | null> {
    return (await currentOfRounds(trx, [roundId], now)).get(roundId) ?? null;
  }

  /** Recomputes the ETA of the round's next task from its current position (rate-limited per task). */
  async function refreshEta(trx: Db, roundId: number, options: { force?: boolean } = {}) {
    const now = new Date();
    const next = await nextTaskOfRound(trx, roundId);
    if (!next || next.latitude === null || next.longitude === null) return null;
    const position = await current(trx, roundId, now);
    if (!position) return null;
    const eta = estimateArrival(position, { latitude: next.latitude, longitude: next.longitude }, now, rule);
    const stored = await storeEta(trx, next.task_id, eta, options.force ? 0 : config.API_ETA_MIN_INTERVAL_MS);
    return stored ? eta : null;
  }

  return {
    current,
    currentOfRounds,
    refreshEta,
    /** Stores a position of an active round and refreshes its next task's ETA. */
    async record(position: NewPosition) {
      await db.transaction().execute(async (trx) => {
        await upsertPositions(trx, [position]);
        await refreshEta(trx, position.roundId);
      });
    },

    /**
     * Stores a batch of tracker positions, each for its round if that round is active with that
     * vehicle (else it is dropped), the newest per round; then refreshes the ETA of the rounds
     * whose ETA is due. A fleet's positions arrive by thousands a second: one query finds the
     * active rounds, one stores every position, one finds the ETAs due, whatever the batch's size;
     * only the ETAs due (each at most every API_ETA_MIN_INTERVAL_MS) cost queries of their own.
     */
    async recordTrackerPositions(batch: TrackerPosition[]) {
      const active = await activeRoundsOfVehicles(db, batch);
      const newest = new Map<number, TrackerPosition>();
      for (const p of batch) {
        if (!active.has(p.roundId)) continue;
        const seen = newest.get(p.roundId);
        if (!seen || seen.recordedAt < p.recordedAt) newest.set(p.roundId, p);
      }
      // In round order, so that batches of two replicas lock the rows they share in one order.
      const rounds = [...newest.keys()].sort((a, b) => a - b);
      await upsertPositions(
        db,
        rounds.map((roundId) => {
          const p = newest.get(roundId) as TrackerPosition;
          return { roundId, source: "tracker", latitude: p.latitude, longitude: p.longitude, recordedAt: p.recordedAt };
        }),
      );
      for (const roundId of await roundsWithEtaDue(db, rounds, config.API_ETA_MIN_INTERVAL_MS)) {
        await db.transaction().execute((trx) => refreshEta(trx, roundId));
      }
    },
  };
}
export type PositionsService = ReturnType<typeof createPositionsService>;
