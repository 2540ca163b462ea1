/** The courier simulator setting of an account under /ops/v1 (see simulator-settings.service.ts). */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { pathId } from "../../http/request-input.ts";
import { CourierSimulator, createSimulatorSettings } from "./simulator-settings.service.ts";

const SimulatorBody = Type.Object(
  { enabled: Type.Boolean(), step_ms: Type.Optional(Type.Integer({ minimum: 200, maximum: 3_600_000 })) },
  { additionalProperties: false },
);

export async function simulatorOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const settings = createSimulatorSettings(options.db);
  app.get<{ Params: { id: string } }>(
    "/accounts/:id/courier_simulator",
    {
      schema: {
        operationId: "simulator.get",
        response: { 200: CourierSimulator },
        summary: "Show the courier simulator setting of an account",
      },
    },
    (request) => settings.get(pathId(request.params.id, "account")),
  );

  app.put<{ Params: { id: string }; Body: Static<typeof SimulatorBody> }>(
    "/accounts/:id/courier_simulator",
    {
      schema: {
        operationId: "simulator.set",
        response: { 200: CourierSimulator },
        summary: "Switch the courier simulator of a test account",
        body: SimulatorBody,
      },
    },
    (request) => settings.set(pathId(request.params.id, "account"), request.body),
  );
}
