/**
 * What a tracking page shows: only what the recipient needs. The status, the ETA, the
 * messenger's position while this task is under way, the destination point, and the proof once
 * delivered. No names, phones or addresses beyond the sender's name (which the SMS already
 * showed) and the name of who accepted the goods.
 */
import { formatTimestamp } from "@dos/contracts";
import { HttpError, notFound } from "@dos/service-kit";
import { type Kysely, sql } from "kysely";
import type { DB } from "../db/database.ts";
import type { PositionsService } from "../positions/positions.service.ts";

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
/** A proof image id as the upload names it (24 base64url characters and the extension). */
const MEDIA_ID = /^[A-Za-z0-9_-]{24}\.(png|jpg)$/;

export function createTrackingService(db: Kysely<DB>, positions: PositionsService, ttlMs: number) {
  return {
    /** The state behind a token: 404 when unknown or not started, 410 once expired. */
    async state(token: string): Promise<TrackingState> {
      if (!TOKEN.test(token)) throw notFound("tracking link");
      const row = await db
        .selectFrom("tasks as t")
        .innerJoin("deliveries as d", "d.id", "t.delivery_id")
        .innerJoin("accounts as a", "a.id", "d.account_id")
        .leftJoin("delivery_zones as z", (join) =>
          join.onRef("z.account_id", "=", "d.account_id").onRef("z.postal_code", "=", "t.postal_code"),
        )
        .leftJoin("round_tasks as rt", "rt.task_id", "t.id")
        .leftJoin("rounds as r", "r.id", "rt.round_id")
        .select([
          "t.kind",
          "t.started_at",
          "t.completed_at",
          "t.eta",
          "t.failure_reason",
          "t.accepted_by",
          "t.signature_url",
          "t.completion_pictures",
          "d.status",
          sql<string>`coalesce(d.sender_display_name, a.company_name)`.as("sender"),
          sql<number | null>`coalesce(t.latitude, z.latitude)`.as("latitude"),
          sql<number | null>`coalesce(t.longitude, z.longitude)`.as("longitude"),
          "r.id as round_id",
          "r.status as round_status",
        ])
        .where("t.tracking_token", "=", token)
        .executeTakeFirst();
      if (!row?.started_at) throw notFound("tracking link");
      if (row.completed_at && Date.now() - row.completed_at.getTime() > ttlMs) {
        throw new HttpError(410, "tracking link has expired");
      }
      const underWay = !row.completed_at && row.round_status === "active" && row.round_id !== null;
      const position = underWay && row.round_id !== null ? await positions.current(db, row.round_id) : null;
      const delivered = row.status === "delivered" && row.kind === "dropoff";
      return {
        status: row.status,
        sender: row.sender,
        task: row.kind,
        eta: underWay && row.eta ? formatTimestamp(row.eta) : null,
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
    },

    async media(id: string) {
      // Checked before the query: a NUL byte or a huge id would make PostgreSQL fail the request.
      if (!MEDIA_ID.test(id)) throw notFound("image");
      const row = await db
        .selectFrom("task_media")
        .select(["content_type", "bytes"])
        .where("id", "=", id)
        .executeTakeFirst();
      if (!row) throw notFound("image");
      return row;
    },
  };
}
export type TrackingService = ReturnType<typeof createTrackingService>;
