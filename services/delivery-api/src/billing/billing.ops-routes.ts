/** Operator API for an account's monthly statement (mounted under /ops/v1). */
import { Nullable, QuoteLine, Timestamp } from "@dos/contracts";
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

/** One ended delivery of a statement. */
const StatementLine = Type.Object(
  {
    id: Type.Integer(),
    client_order_reference: Nullable(Type.String()),
    status: Type.Union([Type.Literal("delivered"), Type.Literal("failed"), Type.Literal("cancelled")]),
    service_day: Timestamp,
    price_cents: Nullable(Type.Integer()),
    billed_cents: Type.Integer({ description: "0 for a cancelled delivery and in a test account." }),
    tariff_id: Nullable(Type.Integer()),
    price_lines: Type.Array(QuoteLine),
  },
  { title: "StatementLine", additionalProperties: false },
);

/** An account's statement of a month (docs/spec-decisions.md, "Billing"). */
const Statement = Type.Object(
  {
    account_id: Type.Integer(),
    month: Type.String({ description: "YYYY-MM (UTC)." }),
    environment: Type.Union([Type.Literal("production"), Type.Literal("test")]),
    billed: Type.Boolean({ description: "false for a test account: every billed amount is 0." }),
    truncated: Type.Boolean({ description: "true when the month holds more deliveries than listed (5,000)." }),
    deliveries: Type.Array(StatementLine),
    totals: Type.Object(
      {
        deliveries: Type.Integer(),
        delivered: Type.Integer(),
        failed: Type.Integer(),
        cancelled: Type.Integer(),
        billed_cents: Type.Integer(),
      },
      { additionalProperties: false, description: "Over the whole month, however many lines are listed." },
    ),
  },
  { title: "Statement", additionalProperties: false },
);

export async function billingOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  app.get<{ Params: { accountId: string }; Querystring: Static<typeof StatementQuery> }>(
    "/accounts/:accountId/statement",
    {
      schema: {
        querystring: StatementQuery,
        operationId: "billing.statement",
        response: { 200: Statement },
        summary: "An account's statement of a month: its ended deliveries, their prices and the totals",
      },
    },
    async (request) => monthStatement(options.db, pathId(request.params.accountId, "account"), request.query.month),
  );
}
