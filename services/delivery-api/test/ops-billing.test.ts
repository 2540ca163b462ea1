/**
 * The operator API's monthly statement: the account's ended deliveries of the month (by their
 * service day, UTC), delivered and failed billed at their price, cancelled listed and billed
 * nothing, a test account never billed; totals equal to SQL's sum over the same rows.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, opsClient } from "./dispatch-fixtures.ts";
import { createTestAccount } from "./fixtures.ts";
import type { OpsClient } from "./ops-client.ts";

let bed: DeliveriesTestbed;
let ops: OpsClient;
before(async () => {
  bed = await startDeliveriesTestbed();
  ops = opsClient(bed.api);
});
after(async () => bed?.close());

/** Ends a delivery as the courier would have, at a price, on a service day (its tasks' slots). */
async function ended(id: number, status: string, priceCents: number, day: string) {
  await bed.api.db
    .updateTable("deliveries")
    .set({ status: status as never, price_cents: priceCents })
    .where("id", "=", id)
    .execute();
  await sql`update tasks set slot_starting_at = ${day}::timestamptz,
    slot_ending_at = ${day}::timestamptz + interval '2 hours' where delivery_id = ${id}`.execute(bed.api.db);
}

const month = "2031-03";

describe("monthly statement", () => {
  test("lists the month's ended deliveries, bills delivered and failed, and totals them as SQL does", async () => {
    const a = await createDelivery(bed.api, bed.account);
    const b = await createDelivery(bed.api, bed.account);
    const c = await createDelivery(bed.api, bed.account);
    const next = await createDelivery(bed.api, bed.account);
    const open = await createDelivery(bed.api, bed.account);
    await ended(a.id, "delivered", 1250, "2031-03-01T00:00:00Z");
    await ended(b.id, "failed", 990, "2031-03-31T23:59:00Z");
    await ended(c.id, "cancelled", 700, "2031-03-15T10:00:00Z");
    await ended(next.id, "delivered", 5000, "2031-04-01T00:00:00Z");
    await sql`update tasks set slot_starting_at = '2031-03-10T10:00:00Z', slot_ending_at = '2031-03-10T12:00:00Z'
      where delivery_id = ${open.id}`.execute(bed.api.db);

    const statement = await ops.get(`/accounts/${bed.account.accountId}/statement?month=${month}`);
    assert.equal(statement.status, 200, JSON.stringify(statement.body));
    assert.deepEqual(
      statement.body.deliveries.map((d: { id: number; status: string; billed_cents: number }) => [
        d.id,
        d.status,
        d.billed_cents,
      ]),
      [
        [a.id, "delivered", 1250],
        [c.id, "cancelled", 0],
        [b.id, "failed", 990],
      ],
    );
    const sum = await sql<{ total: string }>`
      select coalesce(sum(price_cents), 0) as total from deliveries
      where account_id = ${bed.account.accountId} and id = any(${[a.id, b.id]})`.execute(bed.api.db);
    assert.deepEqual(statement.body.totals, {
      deliveries: 3,
      delivered: 1,
      failed: 1,
      cancelled: 1,
      billed_cents: Number(sum.rows[0]?.total),
    });
    assert.equal(statement.body.billed, true);
    assert.equal(statement.body.truncated, false);
    // Every field the console reads survives the declared answer (nothing dropped by its schema).
    assert.deepEqual(Object.keys(statement.body).sort(), [
      "account_id",
      "billed",
      "deliveries",
      "environment",
      "month",
      "totals",
      "truncated",
    ]);
    const line = statement.body.deliveries[0];
    assert.deepEqual(Object.keys(line).sort(), [
      "billed_cents",
      "client_order_reference",
      "id",
      "price_cents",
      "price_lines",
      "service_day",
      "status",
      "tariff_id",
    ]);
    assert.ok(Array.isArray(line.price_lines));
  });

  test("a test account is never billed", async () => {
    const testAccount = await createTestAccount(bed.api.db, { environment: "test" });
    const d = await createDelivery(bed.api, testAccount);
    await ended(d.id, "delivered", 1500, "2031-03-05T09:00:00Z");
    const statement = await ops.get(`/accounts/${testAccount.accountId}/statement?month=${month}`);
    assert.equal(statement.body.billed, false);
    assert.deepEqual(
      statement.body.deliveries.map((x: { id: number; price_cents: number; billed_cents: number }) => [
        x.id,
        x.price_cents,
        x.billed_cents,
      ]),
      [[d.id, 1500, 0]],
    );
    assert.equal(statement.body.totals.billed_cents, 0);
  });

  test("a malformed month or an unknown account is refused", async () => {
    const bad = await ops.get(`/accounts/${bed.account.accountId}/statement?month=2031-13`);
    assert.equal(bad.status, 422);
    assert.equal((await ops.get(`/accounts/999999/statement?month=${month}`)).status, 404);
  });
});
