/**
 * An account's monthly statement (docs/spec-decisions.md, "Billing"): delivered and failed
 * deliveries are billed at their price, cancelled ones are listed and billed nothing; a test
 * account is never billed (every amount 0, `billed: false`).
 */
import { formatTimestamp } from "@dos/contracts";
import type { Kysely } from "kysely";
import { requireAccount } from "../accounts/accounts.service.ts";
import type { DB } from "../db/database.ts";
import { BILLED_STATUSES, statementRows, statementTotals } from "./billing.repository.ts";

/** The most lines one statement lists; its totals always cover the whole month. */
const STATEMENT_MAX_LINES = 5000;

export async function monthStatement(db: Kysely<DB>, accountId: number, month: string) {
  const account = await requireAccount(db, accountId);
  const [year, monthNumber] = month.split("-").map(Number) as [number, number];
  const from = new Date(Date.UTC(year, monthNumber - 1, 1));
  const to = new Date(Date.UTC(year, monthNumber, 1));
  const billed = account.environment === "production";
  const [rows, totals] = await Promise.all([
    statementRows(db, accountId, from, to, STATEMENT_MAX_LINES + 1),
    statementTotals(db, accountId, from, to),
  ]);
  const billable = (status: string) => billed && (BILLED_STATUSES as readonly string[]).includes(status);
  return {
    account_id: accountId,
    month,
    environment: account.environment,
    billed,
    truncated: rows.length > STATEMENT_MAX_LINES,
    deliveries: rows.slice(0, STATEMENT_MAX_LINES).map((row) => ({
      id: row.id,
      client_order_reference: row.client_order_reference,
      status: row.status,
      service_day: formatTimestamp(row.service_day),
      price_cents: row.price_cents,
      billed_cents: billable(row.status) ? (row.price_cents ?? 0) : 0,
      tariff_id: row.price_tariff_id,
      price_lines: row.price_lines,
    })),
    totals: { ...totals, billed_cents: billed ? totals.billed_cents : 0 },
  };
}
