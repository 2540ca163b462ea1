/**
 * Idempotency-Key on POST create and redelivery: a retry with the same key and body gets the
 * first answer; the same key with another body is a 422; concurrent retries make one delivery.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import {
  type DeliveriesTestbed,
  json,
  outboundBody,
  place,
  slot,
  startDeliveriesTestbed,
} from "./delivery-fixtures.ts";
import { createTestAccount, OPS_TOKEN } from "./fixtures.ts";

let bed: DeliveriesTestbed;
before(async () => {
  bed = await startDeliveriesTestbed();
});
after(async () => bed.close());

const create = (key: string, payload: unknown, headers = bed.account.headers) =>
  bed.api.app.inject({
    method: "POST",
    url: "/api/v2/deliveries",
    headers: { ...headers, "idempotency-key": key },
    payload: payload as object,
  });
const countWithReference = async (reference: string) =>
  (await bed.api.db.selectFrom("deliveries").select("id").where("client_order_reference", "=", reference).execute())
    .length;

describe("create", () => {
  test("the same key and body: the first answer again, one delivery, one event", async () => {
    const body = outboundBody(bed.account, { client_order_reference: "IDEM-1" });
    const first = await create("key-1", body);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers["idempotent-replayed"], undefined);
    const again = await create("key-1", body);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers["idempotent-replayed"], "true");
    assert.deepEqual(json(again), json(first));
    assert.equal(await countWithReference("IDEM-1"), 1);
    const events = await bed.api.db
      .selectFrom("outbox")
      .select("id")
      .where("delivery_id", "=", json(first).id)
      .execute();
    assert.equal(events.length, 1);
    const stored = await bed.api.db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("key", "=", "key-1")
      .executeTakeFirstOrThrow();
    assert.equal(stored.account_id, bed.account.accountId);
    assert.equal(stored.response_status, 201);
  });

  test("the same body with its keys in another order is the same request", async () => {
    const body = outboundBody(bed.account, { client_order_reference: "IDEM-ORDER" });
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const first = await create("key-order", body);
    const again = await create("key-order", reordered);
    assert.deepEqual(json(again), json(first));
    assert.equal(await countWithReference("IDEM-ORDER"), 1);
  });

  test("the same key with another body: 422, nothing written", async () => {
    await create("key-2", outboundBody(bed.account, { client_order_reference: "IDEM-2" }));
    const other = await create("key-2", outboundBody(bed.account, { client_order_reference: "IDEM-2b" }));
    assert.equal(other.statusCode, 422);
    assert.deepEqual(json(other), {
      errors: ["Idempotency-Key was already used with another request; use a new key for a new request"],
    });
    assert.equal(await countWithReference("IDEM-2b"), 0);
  });

  test("concurrent requests with one key make one delivery and all get its answer", async () => {
    const body = outboundBody(bed.account, { client_order_reference: "IDEM-RACE" });
    const answers = await Promise.all(Array.from({ length: 6 }, () => create("key-race", body)));
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [201, 201, 201, 201, 201, 201],
    );
    const ids = new Set(answers.map((a) => json(a).id));
    assert.equal(ids.size, 1);
    assert.equal(await countWithReference("IDEM-RACE"), 1);
  });

  test("a refused request stores nothing: the key can be used again with a fixed body", async () => {
    const bad = outboundBody(bed.account, {
      client_order_reference: "IDEM-FIX",
      dropoff: { ...slot(), place: place(bed.account, { postal_code: "13001" }) },
    });
    assert.equal((await create("key-fix", bad)).statusCode, 422);
    const good = await create("key-fix", outboundBody(bed.account, { client_order_reference: "IDEM-FIX" }));
    assert.equal(good.statusCode, 201, good.body);
  });

  test("keys are per account: another account may use the same key", async () => {
    const other = await createTestAccount(bed.api.db);
    await create("shared-key", outboundBody(bed.account, { client_order_reference: "IDEM-A" }));
    const theirs = await create("shared-key", outboundBody(other, { client_order_reference: "IDEM-B" }), other.headers);
    assert.equal(theirs.statusCode, 201);
    assert.equal(theirs.headers["idempotent-replayed"], undefined);
  });

  test("keys expire after 24 hours", async () => {
    const first = await create("key-old", outboundBody(bed.account, { client_order_reference: "IDEM-OLD" }));
    await bed.api.db
      .updateTable("idempotency_keys")
      .set({ created_at: sql<Date>`now() - interval '25 hours'` })
      .where("key", "=", "key-old")
      .execute();
    const later = await create("key-old", outboundBody(bed.account, { client_order_reference: "IDEM-NEW" }));
    assert.equal(later.statusCode, 201);
    assert.notEqual(json(later).id, json(first).id);
  });

  test("an unusable key: 422", async () => {
    for (const key of ["x".repeat(256), "with space", "é"]) {
      const response = await create(key, outboundBody(bed.account));
      assert.equal(response.statusCode, 422, key);
      assert.deepEqual(json(response), { errors: ["Idempotency-Key must be 1 to 255 visible ASCII characters"] });
    }
  });
});

describe("redelivery", () => {
  test("replayed for the same delivery and body; the key on another delivery is a 422", async () => {
    const failed = async () => {
      const created = json(
        await bed.api.app.inject({
          method: "POST",
          url: "/api/v2/deliveries",
          headers: bed.account.headers,
          payload: outboundBody(bed.account),
        }),
      );
      for (const status of ["scheduled", "failed"]) {
        await bed.api.app.inject({
          method: "PATCH",
          url: `/ops/v1/deliveries/${created.id}/status`,
          headers: { authorization: `Bearer ${OPS_TOKEN}` },
          payload: { status },
        });
      }
      return created.id as number;
    };
    const [a, b] = [await failed(), await failed()];
    const redeliver = (id: number) =>
      bed.api.app.inject({
        method: "POST",
        url: `/api/v2/deliveries/${id}/redelivery`,
        headers: { ...bed.account.headers, "idempotency-key": "redo-1" },
        payload: { comments: "again" },
      });
    const first = await redeliver(a);
    assert.equal(first.statusCode, 201, first.body);
    const again = await redeliver(a);
    assert.equal(again.statusCode, 201);
    assert.deepEqual(json(again), json(first));
    assert.equal(again.headers["idempotent-replayed"], "true");
    const other = await redeliver(b);
    assert.equal(other.statusCode, 422);
    assert.deepEqual(json(other), {
      errors: ["Idempotency-Key was already used with another request; use a new key for a new request"],
    });
  });
});
