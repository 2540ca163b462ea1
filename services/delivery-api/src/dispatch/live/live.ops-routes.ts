/** The live map's snapshot under /ops/v1 (see live.service.ts). */
import { MAX_ID } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { createLiveService, LiveFleet } from "./live.service.ts";

const LiveQuery = Type.Object(
  {
    after: Type.Integer({ minimum: 0, maximum: MAX_ID, default: 0, description: "The previous page's `next_after`." }),
    limit: Type.Integer({ minimum: 1, maximum: 5000, default: 5000, description: "Vehicles per page." }),
  },
  { additionalProperties: false },
);

export async function liveOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB>; trackerFreshMs: number }) {
  const live = createLiveService(options.db, { trackerFreshMs: options.trackerFreshMs });
  app.get<{ Querystring: Static<typeof LiveQuery> }>(
    "/fleet/live",
    {
      schema: {
        operationId: "fleet.live",
        summary: "Every vehicle in an active round: its round, messenger, current position and state",
        description:
          "One read for the live map, by vehicle id, in pages of up to 5,000 (`next_after`). Positions then " +
          "arrive on the bus: geo-ingest publishes each vehicle's latest on `geo.positions.<fleet key>` " +
          "(VehiclePosition, at most once a second).",
        querystring: LiveQuery,
        response: { 200: LiveFleet },
      },
    },
    (request) => live.snapshot(request.query),
  );
}
