/**
 * The month's statement of an account, read from its deliveries: those that ended (delivered,
 * failed, cancelled) whose service day (the start of their last task's slot) falls in the month,
 * in UTC. The totals are one aggregate over the same rows, so they hold however many rows the
 * statement lists.
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";

const STATEMENT_STATUSES = ["delivered", "failed", "cancelled"] as const;
/** Statuses billed at their price; a cancelled delivery is listed, billed nothing (docs/spec-decisions.md). */
export const BILLED_STATUSES = ["delivered", "failed"] as const;

const serviceDay = sql<Date>`(select max(t.slot_starting_at) from tasks t where t.delivery_id = d.id)`;

function ofMonth(db: Db, accountId: number, from: Date, to: Date) {
  return db
    .selectFrom("deliveries as d")
    .where("d.account_id", "=", accountId)
    .where("d.status", "in", [...STATEMENT_STATUSES])
    .where(serviceDay, ">=", from)
    .where(serviceDay, "<", to);
}

export function statementRows(db: Db, accountId: number, from: Date, to: Date, limit: number) {
  return ofMonth(db, accountId, from, to)
    .select([
      "d.id",
      "d.client_order_reference",
      "d.status",
      "d.price_cents",
      "d.price_tariff_id",
      "d.price_lines",
      serviceDay.as("service_day"),
    ])
    .orderBy("service_day")
    .orderBy("d.id")
    .limit(limit)
    .execute();
}

export async function statementTotals(db: Db, accountId: number, from: Date, to: Date) {
  const billed = sql<string>`coalesce(sum(d.price_cents) filter (where d.status in ('delivered', 'failed')), 0)`;
  const count = (status: string) => sql<string>`count(*) filter (where d.status = ${status})`;
  const row = await ofMonth(db, accountId, from, to)
    .select([
      sql<string>`count(*)`.as("deliveries"),
      count("delivered").as("delivered"),
      count("failed").as("failed"),
      count("cancelled").as("cancelled"),
      billed.as("billed_cents"),
    ])
    .executeTakeFirstOrThrow();
  return {
    deliveries: Number(row.deliveries),
    delivered: Number(row.delivered),
    failed: Number(row.failed),
    cancelled: Number(row.cancelled),
    billed_cents: Number(row.billed_cents),
  };
}
