/**
 * Vehicles under /ops/v1: External ID (the `vehicle_id` of the geolocation interface), tracker
 * provider, and an optional provider token kept only as its SHA-256. Every change writes the
 * vehicle's FLEET entry through the fleet outbox in the same transaction.
 */
import { createHash } from "node:crypto";
import { formatTimestamp, ShortText } from "@dos/contracts";
import { notFound, unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB, Db } from "../../db/database.ts";
import { isUniqueViolation } from "../../db/unique-violation.ts";
import { pathId } from "../../http/request-input.ts";
import { optionalText, requiredText } from "../../lib/text.ts";
import { lockVehicles, recordFleetState } from "../fleet/fleet.repository.ts";

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

const sha256 = (token: string) => createHash("sha256").update(token).digest("hex");

export async function vehicleView(db: Db, id: number) {
  const row = await db
    .selectFrom("vehicles as v")
    .leftJoin("rounds as r", (join) => join.onRef("r.vehicle_id", "=", "v.id").on("r.status", "=", "active"))
    .selectAll("v")
    .select("r.id as active_round_id")
    .where("v.id", "=", id)
    .executeTakeFirst();
  if (!row) throw notFound(`vehicle ${id}`);
  return {
    id: row.id,
    external_id: row.external_id,
    provider: row.provider,
    label: row.label,
    has_provider_token: row.provider_token_sha256 !== null,
    active_round_id: row.active_round_id,
    created_at: formatTimestamp(row.created_at),
  };
}

export async function vehiclesOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const { db } = options;
  app.post<{ Body: CreateVehicleBody }>(
    "/vehicles",
    {
      schema: {
        operationId: "vehicles.create",
        summary: "Add a vehicle (its External ID is the geolocation interface's vehicle_id)",
        body: CreateVehicleBody,
      },
    },
    async (request, reply) => {
      const body = request.body;
      try {
        const view = await db.transaction().execute(async (trx) => {
          const row = await trx
            .insertInto("vehicles")
            .values({
              external_id: body.external_id,
              provider: requiredText(body.provider, "provider"),
              label: optionalText(body.label),
              provider_token_sha256: body.provider_token ? sha256(body.provider_token) : null,
            })
            .returning("id")
            .executeTakeFirstOrThrow();
          await recordFleetState(trx, [row.id]);
          return vehicleView(trx, row.id);
        });
        return reply.code(201).send(view);
      } catch (error) {
        if (isUniqueViolation(error)) throw unprocessable(`external_id ${body.external_id} is already a vehicle's`);
        throw error;
      }
    },
  );

  app.get(
    "/vehicles",
    { schema: { operationId: "vehicles.list", summary: "List vehicles and their active round" } },
    async () => {
      const rows = await db.selectFrom("vehicles").select("id").orderBy("id").execute();
      return Promise.all(rows.map((row) => vehicleView(db, row.id)));
    },
  );

  app.get<{ Params: { id: string } }>(
    "/vehicles/:id",
    { schema: { operationId: "vehicles.get", summary: "Show a vehicle" } },
    async (request) => vehicleView(db, pathId(request.params.id, "vehicle")),
  );

  app.patch<{ Params: { id: string }; Body: UpdateVehicleBody }>(
    "/vehicles/:id",
    {
      schema: {
        operationId: "vehicles.update",
        summary: "Change a vehicle's provider, label or provider token",
        body: UpdateVehicleBody,
      },
    },
    async (request) => {
      const id = pathId(request.params.id, "vehicle");
      const body = request.body ?? {};
      return db.transaction().execute(async (trx) => {
        if ((await lockVehicles(trx, [id])).length === 0) throw notFound(`vehicle ${id}`);
        if (Object.values(body).every((value) => value === undefined)) return vehicleView(trx, id);
        await trx
          .updateTable("vehicles")
          .set({
            provider: body.provider === undefined ? undefined : requiredText(body.provider, "provider"),
            label: body.label === undefined ? undefined : optionalText(body.label),
            // null removes the token: the provider's requests are then accepted without one.
            provider_token_sha256:
              body.provider_token === undefined ? undefined : body.provider_token && sha256(body.provider_token),
          })
          .where("id", "=", id)
          .execute();
        await recordFleetState(trx, [id]);
        return vehicleView(trx, id);
      });
    },
  );
}
