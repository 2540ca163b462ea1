/** Operator API for an account's monthly statement (mounted under /ops/v1). */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { pathId } from "../http/request-input.ts";
import { monthStatement } from "./billing.service.ts";

const StatementQuery = Type.Object(
  { month: Type.String({ pattern: "^(19|20|21)\\d\\d-(0[1-9]|1[0-2])$", description: "The month, YYYY-MM (UTC)." }) },
  { additionalProperties: false },
);

export async function billingOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  app.get<{ Params: { accountId: string }; Querystring: Static<typeof StatementQuery> }>(
    "/accounts/:accountId/statement",
    {
      schema: {
        querystring: StatementQuery,
        operationId: "billing.statement",
        summary: "An account's statement of a month: its ended deliveries, their prices and the totals",
      },
    },
    async (request) => monthStatement(options.db, pathId(request.params.accountId, "account"), request.query.month),
  );
}
