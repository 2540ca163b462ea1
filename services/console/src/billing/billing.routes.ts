/**
 * The billing page's data, under /api, for the session's account only: the month's statement
 * (delivery-api's, docs/spec-decisions.md "Billing") as JSON, and as CSV for a spreadsheet.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { OpsClient, Statement } from "../delivery-api/ops-client.ts";
import type { CookieNames } from "../sessions/cookies.ts";
import { requireSession } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";

const MonthQuery = Type.Object(
  { month: Type.String({ pattern: "^(19|20|21)\\d\\d-(0[1-9]|1[0-2])$" }) },
  { additionalProperties: false },
);

/** A CSV cell: quoted, and a formula's first character defused (a spreadsheet would run it). */
const cell = (value: string | number | null) => {
  const text = value === null ? "" : String(value);
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return `"${safe.replaceAll('"', '""')}"`;
};
const euros = (cents: number | null) => (cents === null ? "" : (cents / 100).toFixed(2));

function statementCsv(statement: Statement): string {
  const header = [
    "delivery",
    "reference",
    "status",
    "service day",
    "price (EUR)",
    "billed (EUR)",
    "tariff",
    "breakdown",
  ];
  const lines = statement.deliveries.map((d) =>
    [
      d.id,
      d.client_order_reference,
      d.status,
      d.service_day,
      euros(d.price_cents),
      euros(d.billed_cents),
      d.tariff_id,
      d.price_lines.map((line) => `${line.label}: ${euros(line.amount_cents)}`).join("; "),
    ].map(cell),
  );
  const total = [
    "total",
    "",
    `${statement.totals.deliveries} deliveries`,
    "",
    "",
    euros(statement.totals.billed_cents),
    "",
    "",
  ];
  const rows = [header.map(cell), ...lines, total.map(cell)].map((row) => `${row.join(",")}\r\n`);
  return rows.join("");
}

export async function billingRoutes(
  app: FastifyInstance,
  options: { ops: OpsClient; sessions: Sessions; cookies: CookieNames },
) {
  const statementOf = async (request: Parameters<typeof requireSession>[0], month: string) => {
    const { accountId } = await requireSession(request, options.sessions, options.cookies);
    return options.ops.getStatement(accountId, month);
  };

  app.get<{ Querystring: Static<typeof MonthQuery> }>(
    "/statement",
    { schema: { querystring: MonthQuery } },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      return statementOf(request, request.query.month);
    },
  );

  app.get<{ Querystring: Static<typeof MonthQuery> }>(
    "/statement.csv",
    { schema: { querystring: MonthQuery } },
    async (request, reply) => {
      const statement = await statementOf(request, request.query.month);
      return reply
        .header("cache-control", "no-store")
        .header("content-type", "text/csv; charset=utf-8")
        .header("content-disposition", `attachment; filename="statement-${statement.month}.csv"`)
        .send(statementCsv(statement));
    },
  );
}
