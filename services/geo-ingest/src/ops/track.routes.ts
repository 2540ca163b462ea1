/**
 * GET /ops/v1/rounds/{round_id}/track: a round's stored positions in time order, for operators
 * (bearer GEO_OPS_TOKEN). Pages with `after` (the last recorded_at received) and `limit`.
 */
import { formatTimestamp, MAX_ID, parseTimestamp, Timestamp } from "@dos/contracts";
import { bearerAuthHook, unprocessable } from "@dos/service-kit";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { listRoundTrack } from "../positions/positions.repository.ts";
import type { DB } from "../positions/positions.table.ts";

const MAX_LIMIT = 10_000;
const Params = Type.Object({ round_id: Type.Integer({ minimum: 1, maximum: MAX_ID }) });
const Query = Type.Object(
  {
    after: Type.Optional(Timestamp),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: MAX_LIMIT })),
  },
  { additionalProperties: false },
);

export function registerTrackRoutes(app: FastifyInstance, db: Kysely<DB>, opsToken: string) {
  const authenticate = bearerAuthHook(opsToken);

  app.get<{ Params: { round_id: number }; Querystring: { after?: string; limit: number } }>(
    "/ops/v1/rounds/:round_id/track",
    {
      schema: { params: Params, querystring: Query },
      onRequest: authenticate,
      // An unencoded "+" of the offset arrives as a space; take it back rather than refuse it.
      preValidation: async (request) => {
        const query = request.query as { after?: unknown };
        if (typeof query.after === "string") query.after = query.after.replace(" ", "+");
      },
    },
    async (request) => {
      const after = request.query.after === undefined ? undefined : parseTimestamp(request.query.after);
      if (after === null) throw unprocessable("after is not a valid date");
      const { limit } = request.query;
      const rows = await listRoundTrack(db, request.params.round_id, { after, limit });
      const positions = rows.map((row) => ({
        vehicle_external_id: row.vehicle_external_id,
        latitude: row.latitude,
        longitude: row.longitude,
        recorded_at: formatTimestamp(row.recorded_at),
        received_at: formatTimestamp(row.received_at),
        provider: row.provider,
        tracker_id: row.tracker_id,
      }));
      const last = positions.at(-1);
      return {
        round_id: request.params.round_id,
        positions,
        next_after: positions.length === limit && last ? last.recorded_at : null,
      };
    },
  );
}
