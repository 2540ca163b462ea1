/**
 * Housekeeping: the operational tables that every change writes to (the published events of the
 * outbox and of the fleet outbox, expired idempotency records, audit entries past their
 * retention) are emptied of what no one needs any more, so they stay bounded; nothing
 * unpublished and nothing still in use goes.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { sql } from "kysely";
import { pruneExpired } from "../src/housekeeping/housekeeping.repository.ts";
import { type DeliveriesTestbed, json, outboundBody, startDeliveriesTestbed } from "./delivery-fixtures.ts";

let bed: DeliveriesTestbed;
before(async () => {
  bed = await startDeliveriesTestbed();
  await bed.api.start();
});
after(async () => {
  await bed.close();
});

const DAY_MS = 24 * 60 * 60 * 1000;

/** Creates a delivery and waits until the relay has published its event; returns the delivery id. */
async function publishedDelivery(testbed = bed): Promise<number> {
  const response = await testbed.api.app.inject({
    method: "POST",
    url: "/api/v2/deliveries",
    headers: testbed.account.headers,
    payload: outboundBody(testbed.account),
  });
  assert.equal(response.statusCode, 201);
  const id = json(response).id as number;
  const published = () =>
    testbed.api.db
      .selectFrom("outbox")
      .select("published_at")
      .where("delivery_id", "=", id)
      .executeTakeFirstOrThrow()
      .then((row) => row.published_at ?? false);
  await waitFor(published, 5000, `the event of delivery ${id} to be published`);
  return id;
}

describe("housekeeping", () => {
  test("removes published events past the retention, expired idempotency records and old fleet changes; keeps the rest", async () => {
    const db = bed.api.db;
    const old = await publishedDelivery();
    const recent = await publishedDelivery();
    const unpublishedOld = await publishedDelivery();
    const eightDaysAgo = new Date(Date.now() - 8 * DAY_MS);
    await sql`update outbox set occurred_at = ${eightDaysAgo}, published_at = ${eightDaysAgo} where delivery_id = ${old}`.execute(
      db,
    );
    // Never published (NATS was down for a week): it must still go out, however old.
    await sql`update outbox set occurred_at = ${eightDaysAgo}, published_at = null where delivery_id = ${unpublishedOld}`.execute(
      db,
    );

    const account = bed.account.accountId;
    const record = (key: string, createdAt: Date) => ({
      account_id: account,
      operation: "create",
      key,
      request_sha256: Buffer.alloc(32),
      response_status: 201,
      response_body: JSON.stringify({}),
      created_at: createdAt,
    });
    await db
      .insertInto("idempotency_keys")
      .values([record("expired", new Date(Date.now() - 25 * 60 * 60 * 1000)), record("live", new Date())])
      .execute();

    await db
      .insertInto("fleet_outbox")
      .values([
        { fleet_key: "old-published", entry: null, created_at: eightDaysAgo, published_at: eightDaysAgo },
        { fleet_key: "old-unpublished", entry: null, created_at: eightDaysAgo, published_at: null },
        { fleet_key: "recent", entry: null, created_at: new Date(), published_at: new Date() },
      ])
      .execute();

    // Audit entries: one past the retention (400 days), one just within it.
    const audit = (requestId: string, at: Date) => ({
      at,
      actor_kind: "automation" as const,
      actor_name: "automation",
      method: "POST",
      route: "/ops/v1/messengers",
      resource_type: "messengers",
      status_code: 201,
      request_id: requestId,
    });
    await db
      .insertInto("audit_log")
      .values([
        audit("audit-old", new Date(Date.now() - 401 * DAY_MS)),
        audit("audit-kept", new Date(Date.now() - 399 * DAY_MS)),
      ])
      .execute();

    const retention = { outboxRetentionMs: 7 * DAY_MS, auditRetentionMs: 400 * DAY_MS };
    const removed = await pruneExpired(db, retention);
    assert.deepEqual(removed, { outbox: 1, fleetOutbox: 1, idempotencyKeys: 1, auditLog: 1 });
    const auditKept = await db
      .selectFrom("audit_log")
      .select("request_id")
      .where("request_id", "in", ["audit-old", "audit-kept"])
      .execute();
    assert.deepEqual(
      auditKept.map((row) => row.request_id),
      ["audit-kept"],
    );

    const outbox = await db.selectFrom("outbox").select("delivery_id").orderBy("delivery_id").execute();
    const kept = outbox.map((row) => Number(row.delivery_id));
    assert.ok(!kept.includes(old), "the event published 8 days ago is removed");
    assert.ok(kept.includes(recent), "a recently published event stays");
    assert.ok(kept.includes(unpublishedOld), "an unpublished event stays, however old");
    const keys = await db.selectFrom("idempotency_keys").select("key").where("account_id", "=", account).execute();
    assert.deepEqual(
      keys.map((row) => row.key),
      ["live"],
    );
    const fleet = await db
      .selectFrom("fleet_outbox")
      .select("fleet_key")
      .where("fleet_key", "in", ["old-published", "old-unpublished", "recent"])
      .orderBy("fleet_key")
      .execute();
    assert.deepEqual(
      fleet.map((row) => row.fleet_key),
      ["old-unpublished", "recent"],
    );

    // The delivery whose event went keeps its history: its next change gets the next sequence.
    const cancelled = await bed.api.app.inject({
      method: "PATCH",
      url: `/api/v2/deliveries/${old}/cancel`,
      headers: bed.account.headers,
    });
    assert.equal(cancelled.statusCode, 200);
    const next = await db
      .selectFrom("outbox")
      .select("sequence")
      .where("delivery_id", "=", old)
      .executeTakeFirstOrThrow();
    assert.equal(next.sequence, 2);

    // Nothing left to remove: a second pass removes nothing.
    assert.deepEqual(await pruneExpired(db, retention), {
      outbox: 0,
      fleetOutbox: 0,
      idempotencyKeys: 0,
      auditLog: 0,
    });
  });
});

describe("the running service", () => {
  let own: DeliveriesTestbed;
  before(async () => {
    own = await startDeliveriesTestbed({ API_HOUSEKEEPING_INTERVAL_MS: "200", API_OUTBOX_RETENTION_HOURS: "1" });
    await own.api.start();
  });
  after(async () => {
    await own.close();
  });

  test("deletes a published event once it is older than API_OUTBOX_RETENTION_HOURS, by itself", async () => {
    const id = await publishedDelivery(own);
    const remaining = () => own.api.db.selectFrom("outbox").select("id").where("delivery_id", "=", id).execute();
    // Published, and younger than the retention: it stays through several passes.
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal((await remaining()).length, 1);
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await sql`update outbox set occurred_at = ${twoHoursAgo}, published_at = ${twoHoursAgo} where delivery_id = ${id}`.execute(
      own.api.db,
    );
    await waitFor(async () => (await remaining()).length === 0, 5000, "the aged event to be deleted");
    assert.equal((await remaining()).length, 0);
    // The pass counts its rows once its DELETE has returned: a moment after the row is gone,
    // while the series already reads 0.
    const counted = /^housekeeping_deleted_rows_total\{table="outbox"[^}]*\} (\d+)$/m;
    const deletedRows = await waitFor(
      async () => {
        const value = counted.exec((await own.api.app.inject({ method: "GET", url: "/metrics" })).body)?.[1];
        return value === "0" ? undefined : value;
      },
      5000,
      "the deleted row counted",
    );
    assert.equal(deletedRows, "1");
  });
});
