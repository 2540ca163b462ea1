/** Vehicles under /ops/v1 (see vehicles.service.ts). */
import { ShortText } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { pathId } from "../../http/request-input.ts";
import { createVehiclesService, Vehicle } from "./vehicles.service.ts";

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

export async function vehiclesOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const vehicles = createVehiclesService(options.db);
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

  app.get(
    "/vehicles",
    {
      schema: {
        operationId: "vehicles.list",
        response: { 200: Type.Array(Vehicle) },
        summary: "List vehicles and their active round",
      },
    },
    () => vehicles.list(),
  );

  app.get<{ Params: { id: string } }>(
    "/vehicles/:id",
    { schema: { operationId: "vehicles.get", response: { 200: Vehicle }, summary: "Show a vehicle" } },
    (request) => vehicles.get(pathId(request.params.id, "vehicle")),
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
