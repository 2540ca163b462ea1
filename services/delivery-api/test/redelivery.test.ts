/**
 * POST /api/v2/deliveries/{id}/redelivery: only from failed; direction, packages,
 * reversed_packages and client_order_reference kept; nested partial changes merged; both
 * deliveries linked, in one transaction with their events.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type DeliveriesTestbed,
  inHours,
  json,
  outboundBody,
  slot,
  startDeliveriesTestbed,
} from "./delivery-fixtures.ts";
import { OPS_TOKEN } from "./fixtures.ts";

let bed: DeliveriesTestbed;
before(async () => {
  bed = await startDeliveriesTestbed();
});
after(async () => bed.close());

async function failedDelivery() {
  const created = await bed.api.app.inject({
    method: "POST",
    url: "/api/v2/deliveries",
    headers: bed.account.headers,
    payload: outboundBody(bed.account, { comments: "leave at the door" }),
  });
  const delivery = json(created);
  for (const status of ["scheduled", "failed"]) {
    const response = await bed.api.app.inject({
      method: "PATCH",
      url: `/ops/v1/deliveries/${delivery.id}/status`,
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
      payload: { status, failure_reason: "recipient absent" },
    });
    assert.equal(response.statusCode, 200, response.body);
  }
  return delivery;
}
const redeliver = (id: number, payload: unknown, headers = bed.account.headers) =>
  bed.api.app.inject({
    method: "POST",
    url: `/api/v2/deliveries/${id}/redelivery`,
    headers,
    payload: payload as object,
  });
const get = async (id: number) =>
  json(await bed.api.app.inject({ method: "GET", url: `/api/v2/deliveries/${id}`, headers: bed.account.headers }));

test("from a failed delivery: 201, linked both ways, ignored fields kept, nested changes merged", async () => {
  const original = await failedDelivery();
  const newSlot = slot(48, 2);
  const response = await redeliver(original.id, {
    direction: "inbound",
    packages: [{ name: "Other", amount: 9, volume_dm3: 1, weight_kg: 1 }],
    reversed_packages: [{ anything: true }],
    client_order_reference: "CHANGED",
    comments: "second try",
    dropoff: { ...newSlot, place: { recipient_name: "Neighbour", address_instructions: "Ask at number 14" } },
  });
  assert.equal(response.statusCode, 201, response.body);
  const redelivery = json(response);
  assert.equal(redelivery.status, "saved");
  assert.equal(redelivery.original_delivery_id, original.id);
  assert.equal(redelivery.redelivery_id, null);
  assert.equal(redelivery.direction, "outbound");
  assert.equal(redelivery.client_order_reference, original.client_order_reference);
  assert.deepEqual(redelivery.packages, original.packages);
  assert.deepEqual(redelivery.reversed_packages, []);
  assert.equal(redelivery.comments, "second try");
  assert.equal(redelivery.dropoff.slot_starting_at, newSlot.slot_starting_at);
  assert.deepEqual(redelivery.dropoff.place, {
    ...original.dropoff.place,
    recipient_name: "Neighbour",
    address_instructions: "Ask at number 14",
  });
  assert.equal(redelivery.pickup.slot_ending_at, newSlot.slot_starting_at, "the default pickup follows the new slot");
  assert.equal(redelivery.price_cents, 700);

  const after = await get(original.id);
  assert.equal(after.status, "failed", "the original keeps its status");
  assert.equal(after.redelivery_id, redelivery.id);
  const events = await bed.api.db
    .selectFrom("outbox")
    .select(["delivery_id", "sequence", "type"])
    .where("delivery_id", "in", [original.id, redelivery.id])
    .orderBy("delivery_id")
    .orderBy("sequence")
    .execute();
  assert.deepEqual(
    events.map((e) => `${e.delivery_id}/${e.sequence}:${e.type}`),
    [
      `${original.id}/1:delivery.created`,
      `${original.id}/2:delivery.status_changed`,
      `${original.id}/3:delivery.status_changed`,
      `${original.id}/4:delivery.redelivery_created`,
      `${redelivery.id}/1:delivery.created`,
    ],
  );
});

test("an empty body redelivers as it was, when its slots are still ahead", async () => {
  const original = await failedDelivery();
  const response = await redeliver(original.id, {});
  assert.equal(response.statusCode, 201, response.body);
  assert.deepEqual(json(response).dropoff.place, original.dropoff.place);
});

test("the original's slots have started: the redelivery must give new ones", async () => {
  const original = await failedDelivery();
  await bed.api.db
    .updateTable("tasks")
    .set({ slot_starting_at: new Date(Date.now() - 7200_000), slot_ending_at: new Date(Date.now() - 3600_000) })
    .where("delivery_id", "=", original.id)
    .execute();
  const response = await redeliver(original.id, { comments: "again" });
  assert.equal(response.statusCode, 422);
  assert.deepEqual(json(response), {
    errors: ["dropoff.slot_starting_at has already started; slots must start in the future"],
  });
  const fixed = await redeliver(original.id, { dropoff: slot(30, 1) });
  assert.equal(fixed.statusCode, 201, fixed.body);
});

test("not failed: 422 naming the original delivery and saying it must be failed", async () => {
  const created = json(
    await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers: bed.account.headers,
      payload: outboundBody(bed.account),
    }),
  );
  const response = await redeliver(created.id, { dropoff: slot(30) });
  assert.equal(response.statusCode, 422);
  assert.deepEqual(json(response), {
    errors: [`original delivery ${created.id} must be failed to be redelivered; it is saved`],
  });
  const count = await bed.api.db
    .selectFrom("deliveries")
    .select("id")
    .where("original_delivery_id", "=", created.id)
    .execute();
  assert.equal(count.length, 0);
});

test("a second redelivery of the same delivery: 422", async () => {
  const original = await failedDelivery();
  const first = json(await redeliver(original.id, { dropoff: slot(30) }));
  const second = await redeliver(original.id, { dropoff: slot(31) });
  assert.equal(second.statusCode, 422);
  assert.deepEqual(json(second), { errors: [`original delivery ${original.id} already has redelivery ${first.id}`] });
});

test("concurrent redeliveries of one delivery make exactly one", async () => {
  const original = await failedDelivery();
  const answers = await Promise.all([0, 1, 2, 3].map((i) => redeliver(original.id, { dropoff: slot(30 + i) })));
  assert.deepEqual(answers.map((a) => a.statusCode).sort(), [201, 422, 422, 422]);
  const rows = await bed.api.db
    .selectFrom("deliveries")
    .select("id")
    .where("original_delivery_id", "=", original.id)
    .execute();
  assert.equal(rows.length, 1);
});

test("the rules apply to the changes; the default-place task cannot be changed", async () => {
  const original = await failedDelivery();
  const cases: Array<[unknown, string[]]> = [
    [{ dropoff: { place: { postal_code: "13001" } } }, ["dropoff.place.postal_code 13001 is not in a delivered zone"]],
    [
      { dropoff: { slot_starting_at: inHours(-3) } },
      ["dropoff.slot_starting_at has already started; slots must start in the future"],
    ],
    [
      { pickup: { place: { recipient_name: "Someone" } } },
      ["pickup is the task at the account's default place; it is filled in automatically and cannot be changed"],
    ],
    [{ status: "saved" }, ["status is not a known field"]],
  ];
  for (const [body, errors] of cases) {
    const response = await redeliver(original.id, body);
    assert.equal(response.statusCode, 422, JSON.stringify(body));
    assert.deepEqual(json(response), { errors });
  }
});

test("unknown delivery: 404", async () => {
  const response = await redeliver(424242, {});
  assert.equal(response.statusCode, 404);
  assert.deepEqual(json(response), { errors: ["delivery 424242 not found"] });
});

test("pricing not answering: 503, no redelivery, the original unlinked", async () => {
  const original = await failedDelivery();
  bed.pricing.mode = "silent";
  try {
    const response = await redeliver(original.id, { dropoff: slot(30) });
    assert.equal(response.statusCode, 503);
  } finally {
    bed.pricing.mode = "price";
  }
  assert.equal((await get(original.id)).redelivery_id, null);
});
