/**
 * What a tracking page shows: only what the recipient needs. The status, the ETA, the
 * messenger's position while this task is under way, the destination point, and the proof once
 * delivered. No names, phones or addresses beyond the sender's name (which the SMS already
 * showed) and the name of who accepted the goods.
 */
import { formatTimestamp } from "@dos/contracts";
import { HttpError, notFound } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import type { CurrentPosition, PositionsService } from "../positions/positions.service.ts";
import { proofImage } from "../rounds/tasks.service.ts";
import { findTrackedTasks, type TrackedTask } from "./tracking.repository.ts";

export interface TrackingState {
  status: string;
  sender: string;
  task: "pickup" | "dropoff";
  eta: string | null;
  destination: { latitude: number; longitude: number } | null;
  messenger: { latitude: number; longitude: number; recorded_at: string } | null;
  completed_at: string | null;
  failure_reason: string | null;
  proof: { accepted_by: string | null; signature_url: string | null; pictures: string[] } | null;
}

const TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

/** 410 for a link whose delivery ended more than the TTL ago; the page words it by how it ended. */
export class TrackingLinkExpired extends HttpError {
  readonly cancelled: boolean;
  constructor(cancelled: boolean) {
    super(410, "tracking link has expired");
    this.cancelled = cancelled;
  }
}

/** What a token reads as: its state, or the 404/410 its routes answer. */
export type TrackingOutcome = TrackingState | HttpError;

export function createTrackingService(db: Kysely<DB>, positions: PositionsService, ttlMs: number) {
  /** The state behind each token, read in two queries however many tokens (open streams share them). */
  async function states(tokens: string[]): Promise<Map<string, TrackingOutcome>> {
    const outcomes = new Map<string, TrackingOutcome>();
    const valid = tokens.filter((token) => TOKEN.test(token));
    const rows = valid.length > 0 ? await findTrackedTasks(db, valid) : [];
    const now = new Date();
    const live = rows.filter((row) => row.started_at && !expired(row, now));
    const underWay = live.filter(isUnderWay);
    const current = await positions.currentOfRounds(
      db,
      underWay.map((row) => row.round_id as number),
      now,
    );
    for (const row of rows) {
      if (!row.started_at || !row.tracking_token) continue;
      outcomes.set(
        row.tracking_token,
        expired(row, now)
          ? new TrackingLinkExpired(row.cancelled_at !== null && !row.completed_at)
          : toState(row, isUnderWay(row) ? (current.get(row.round_id as number) ?? null) : null),
      );
    }
    for (const token of tokens) if (!outcomes.has(token)) outcomes.set(token, notFound("tracking link"));
    return outcomes;
  }

  /** The link expires the TTL after its task completed or its delivery was cancelled. */
  function expired(row: TrackedTask, now: Date): boolean {
    const endedAt = row.completed_at ?? row.cancelled_at;
    return endedAt !== null && now.getTime() - endedAt.getTime() > ttlMs;
  }

  return {
    states,

    /** The state behind a token: 404 when unknown or not started, 410 once expired. */
    async state(token: string): Promise<TrackingState> {
      const outcome = (await states([token])).get(token);
      if (outcome === undefined || outcome instanceof HttpError) throw outcome ?? notFound("tracking link");
      return outcome;
    },

    media: (id: string) => proofImage(db, id),
  };
}
export type TrackingService = ReturnType<typeof createTrackingService>;

/** The messenger is shown, with the ETA, only while the task is under way on an active round. */
function isUnderWay(row: TrackedTask): boolean {
  return !row.completed_at && !row.cancelled_at && row.round_status === "active" && row.round_id !== null;
}

function toState(row: TrackedTask, position: CurrentPosition | null): TrackingState {
  const delivered = row.status === "delivered" && row.kind === "dropoff";
  return {
    status: row.status,
    sender: row.sender,
    task: row.kind,
    eta: isUnderWay(row) && row.eta ? formatTimestamp(row.eta) : null,
    destination:
      row.latitude !== null && row.longitude !== null ? { latitude: row.latitude, longitude: row.longitude } : null,
    messenger: position
      ? {
          latitude: position.latitude,
          longitude: position.longitude,
          recorded_at: formatTimestamp(position.recorded_at),
        }
      : null,
    completed_at: row.completed_at ? formatTimestamp(row.completed_at) : null,
    failure_reason: row.failure_reason,
    proof: delivered
      ? { accepted_by: row.accepted_by, signature_url: row.signature_url, pictures: row.completion_pictures }
      : null,
  };
}
