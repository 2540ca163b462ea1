/** Vehicles under /ops/v1 (see vehicles.service.ts). */
import { parseTimestamp, ShortText, Timestamp, VEHICLE_TRACK_MAX_LIMIT } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { LinkHeader, nextPageLink, PageQuery } from "../../http/paging.ts";
import { pathId } from "../../http/request-input.ts";
import type { VehicleTrackBus } from "./vehicle-track.bus.ts";
import { createVehiclesService, Vehicle, VehiclePositions, VehicleTokenRotated } from "./vehicles.service.ts";

/** Printable characters only: the ID travels in URL paths and NATS keys (encoded when needed). */
const ExternalId = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: "^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$",
});
const Token = Type.String({ minLength: 16, maxLength: 200 });

const CreateVehicleBody = Type.Object(
  {
    external_id: ExternalId,
    provider: ShortText(),
    label: Type.Optional(Type.Union([ShortText(), Type.Null()])),
    provider_token: Type.Optional(Type.Union([Token, Type.Null()])),
  },
  { additionalProperties: false },
);
type CreateVehicleBody = Static<typeof CreateVehicleBody>;
const UpdateVehicleBody = Type.Partial(Type.Omit(CreateVehicleBody, ["external_id"]), { additionalProperties: false });
type UpdateVehicleBody = Static<typeof UpdateVehicleBody>;
const PositionsQuery = Type.Object(
  {
    since: Type.Optional({ ...Timestamp, description: "Only positions recorded at or after this time." }),
    before: Type.Optional({
      ...Timestamp,
      description: "Only positions recorded before this time: the previous page's `next_before`.",
    }),
    limit: Type.Integer({ minimum: 1, maximum: VEHICLE_TRACK_MAX_LIMIT, default: 100 }),
  },
  { additionalProperties: false },
);
type PositionsQuery = Static<typeof PositionsQuery>;

/** A timestamp of the query string, or a 422 naming it (an unencoded "+" of the offset arrives as a space). */
function queryTime(name: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const date = parseTimestamp(text);
  if (!date) throw unprocessable(`querystring.${name} is not a real date`);
  return date;
}

export async function vehiclesOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB>; track: VehicleTrackBus }) {
  const vehicles = createVehiclesService(options.db, options.track);
  app.post<{ Body: CreateVehicleBody }>(
    "/vehicles",
    {
      schema: {
        operationId: "vehicles.create",
        response: { 201: Vehicle },
        summary: "Add a vehicle (its External ID is the geolocation interface's vehicle_id)",
        body: CreateVehicleBody,
      },
    },
    async (request, reply) => reply.code(201).send(await vehicles.create(request.body)),
  );

  app.get<{ Querystring: PageQuery }>(
    "/vehicles",
    {
      schema: {
        operationId: "vehicles.list",
        querystring: PageQuery,
        response: { 200: { ...Type.Array(Vehicle), headers: LinkHeader } },
        summary: "List vehicles and their active round, by id, in pages",
      },
    },
    async (request, reply) => {
      const page = await vehicles.list(request.query);
      nextPageLink(request, reply, request.query, page.hasMore);
      return page.vehicles;
    },
  );

  app.get<{ Params: { id: string } }>(
    "/vehicles/:id",
    {
      schema: {
        operationId: "vehicles.get",
        response: { 200: Vehicle },
        summary: "Show a vehicle: its tracker, its current round and its tracker's last position",
      },
    },
    (request) => vehicles.get(pathId(request.params.id, "vehicle")),
  );

  app.get<{ Params: { id: string }; Querystring: PositionsQuery }>(
    "/vehicles/:id/positions",
    {
      schema: {
        operationId: "vehicles.positions",
        response: { 200: VehiclePositions },
        summary: "A vehicle's recent positions, newest first (from geo-ingest)",
        description:
          "The positions its tracker sent during its rounds, as geo-ingest stored them (kept GEO_RETENTION_DAYS), " +
          "newest first: at most `limit` (≤ 1,000), recorded at or after `since` and before `before`. 503 with " +
          "Retry-After when geo-ingest does not answer.",
        querystring: PositionsQuery,
      },
      preValidation: async (request) => {
        const query = request.query as Record<string, unknown>;
        for (const name of ["since", "before"]) {
          if (typeof query[name] === "string") query[name] = (query[name] as string).replace(" ", "+");
        }
      },
    },
    (request) =>
      vehicles.positions(pathId(request.params.id, "vehicle"), {
        since: queryTime("since", request.query.since),
        before: queryTime("before", request.query.before),
        limit: request.query.limit,
      }),
  );

  app.post<{ Params: { id: string } }>(
    "/vehicles/:id/provider_token",
    {
      schema: {
        operationId: "vehicles.rotate-token",
        response: { 200: VehicleTokenRotated },
        summary: "Give the vehicle a new random provider token, shown once (the previous one stops working)",
      },
    },
    async (request, reply) => {
      const rotated = await vehicles.rotateToken(pathId(request.params.id, "vehicle"));
      // The token appears in this answer only: no cache may keep a copy.
      return reply.header("cache-control", "no-store").send(rotated);
    },
  );

  app.patch<{ Params: { id: string }; Body: UpdateVehicleBody }>(
    "/vehicles/:id",
    {
      schema: {
        operationId: "vehicles.update",
        response: { 200: Vehicle },
        summary: "Change a vehicle's provider, label or provider token",
        body: UpdateVehicleBody,
      },
    },
    (request) => vehicles.update(pathId(request.params.id, "vehicle"), request.body ?? {}),
  );
}
