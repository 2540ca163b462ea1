/**
 * PATCH/PUT /api/v2/deliveries/{id} (partial update, packages replaced, nested partial task and
 * place) and PATCH .../cancel, with the states that allow them.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
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

async function createOutbound(overrides: Record<string, unknown> = {}) {
  const response = await bed.api.app.inject({
    method: "POST",
    url: "/api/v2/deliveries",
    headers: bed.account.headers,
    payload: outboundBody(bed.account, overrides),
  });
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}

function update(id: number, payload: unknown, method: "PATCH" | "PUT" = "PATCH") {
  return bed.api.app.inject({
    method,
    url: `/api/v2/deliveries/${id}`,
    headers: bed.account.headers,
    payload: payload as object,
  });
}
function cancel(id: number, payload?: string) {
  const headers =
    payload === undefined ? bed.account.headers : { ...bed.account.headers, "content-type": "application/json" };
  return bed.api.app.inject({ method: "PATCH", url: `/api/v2/deliveries/${id}/cancel`, headers, payload });
}
async function setStatus(id: number, status: string) {
  const response = await bed.api.app.inject({
    method: "PATCH",
    url: `/ops/v1/deliveries/${id}/status`,
    headers: { authorization: `Bearer ${OPS_TOKEN}` },
    payload: { status },
  });
  assert.equal(response.statusCode, 200, response.body);
}
async function events(id: number) {
  const rows = await bed.api.db
    .selectFrom("outbox")
    .select(["type", "sequence"])
    .where("delivery_id", "=", id)
    .orderBy("sequence")
    .execute();
  return rows.map((r) => `${r.sequence}:${r.type}`);
}

describe("update", () => {
  test("a single slot start: only it changes; the default pickup follows; the price is quoted again", async () => {
    const created = await createOutbound();
    const start = inHours(25.5);
    const response = await update(created.id, { dropoff: { slot_starting_at: start } });
    assert.equal(response.statusCode, 200, response.body);
    const updated = json(response);
    assert.equal(updated.dropoff.slot_starting_at, start);
    assert.equal(updated.dropoff.slot_ending_at, created.dropoff.slot_ending_at);
    assert.deepEqual(updated.dropoff.place, created.dropoff.place);
    assert.equal(updated.pickup.slot_ending_at, start, "the pickup at the default place ends when the dropoff starts");
    assert.equal(updated.price_cents, 1000, "a 30-minute slot costs more");
    assert.deepEqual(
      { ...updated, dropoff: null, pickup: null, price_cents: null },
      { ...created, dropoff: null, pickup: null, price_cents: null },
    );
    assert.deepEqual(await events(created.id), ["1:delivery.created", "2:delivery.updated"]);
  });

  test("PUT is the same partial update", async () => {
    const created = await createOutbound();
    const response = await update(created.id, { comments: "Ring twice" }, "PUT");
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).comments, "Ring twice");
    assert.equal(json(response).client_order_reference, "ORDER-1");
  });

  test("nested place fields are partial: the phone alone changes, normalised", async () => {
    const created = await createOutbound();
    const response = await update(created.id, { dropoff: { place: { recipient_phone: "+44 20 7946 0958" } } });
    assert.equal(response.statusCode, 200, response.body);
    const updated = json(response);
    assert.deepEqual(updated.dropoff.place, { ...created.dropoff.place, recipient_phone: "+44 20 7946 0958" });
    assert.equal(updated.dropoff.slot_starting_at, created.dropoff.slot_starting_at);
    assert.equal(updated.price_cents, created.price_cents);
  });

  test("packages replace the whole array", async () => {
    const created = await createOutbound();
    const packages = [{ name: "Crate", amount: 4, volume_dm3: 20, weight_kg: 8 }];
    const response = await update(created.id, { packages });
    assert.equal(response.statusCode, 200, response.body);
    const updated = json(response);
    assert.deepEqual(updated.packages, [
      {
        package_type_id: null,
        type: "custom",
        ...packages[0],
        fragility: null,
        temperature: null,
        client_reference: null,
      },
    ]);
    assert.equal(updated.price_cents, 900);
    const rows = await bed.api.db
      .selectFrom("delivery_packages")
      .select("id")
      .where("delivery_id", "=", created.id)
      .execute();
    assert.equal(rows.length, 1);
  });

  test("top-level fields, null clearing an optional one", async () => {
    const created = await createOutbound({ comments: "first" });
    const response = await update(created.id, {
      comments: null,
      client_order_reference: "ORDER-2",
      bring_back_containers: true,
    });
    const updated = json(response);
    assert.equal(updated.comments, null);
    assert.equal(updated.client_order_reference, "ORDER-2");
    assert.equal(updated.bring_back_containers, true);
  });

  test("a client task may switch to a saved address, keeping its slot", async () => {
    const created = await createOutbound();
    const response = await update(created.id, { dropoff: bed.account.savedAddressIds[0] });
    assert.equal(response.statusCode, 200, response.body);
    const updated = json(response);
    assert.equal(updated.dropoff.place.address, "5 Place Bellecour");
    assert.equal(updated.dropoff.slot_starting_at, created.dropoff.slot_starting_at);
  });

  test("an empty body changes nothing and records no event", async () => {
    const created = await createOutbound();
    const response = await update(created.id, {});
    assert.equal(response.statusCode, 200);
    assert.deepEqual(json(response), created);
    assert.deepEqual(await events(created.id), ["1:delivery.created"]);
  });

  test("the task at the default place cannot be changed", async () => {
    const created = await createOutbound();
    const response = await update(created.id, { pickup: { slot_starting_at: inHours(20) } });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(json(response), {
      errors: [
        "pickup is the task at the account's default place; it is filled in automatically and cannot be changed",
      ],
    });
  });

  test("the rules of create apply to what is changed", async () => {
    const created = await createOutbound();
    const cases: Array<[unknown, string[]]> = [
      [
        { dropoff: { slot_starting_at: inHours(-1) } },
        ["dropoff.slot_starting_at has already started; slots must start in the future"],
      ],
      [
        { dropoff: { slot_ending_at: created.dropoff.slot_starting_at } },
        ["dropoff.slot_ending_at must be after dropoff.slot_starting_at"],
      ],
      [
        { dropoff: { place: { postal_code: "13001" } } },
        ["dropoff.place.postal_code 13001 is not in a delivered zone"],
      ],
      [{ dropoff: { place: { recipient_phone: null } } }, ["dropoff.place.recipient_phone is required"]],
      [
        { dropoff: { place: { address: "12 Rue de la Paix, bâtiment B" } } },
        [
          "dropoff.place.address must hold only the street number and street name; put any other information (building, floor, apartment, access code...) in dropoff.place.address_instructions",
        ],
      ],
      [
        { packages: [{ package_type_id: 31337, amount: 1 }] },
        ["packages[0].package_type_id 31337 is an unknown package type"],
      ],
      [{ packages: [] }, ["packages must have at least 1 entry"]],
      [{ direction: "inbound" }, ["direction is not a known field"]],
      [{ dropoff: { place: { recipient_name: null } } }, ["dropoff.place.recipient_name must be a string"]],
    ];
    for (const [body, errors] of cases) {
      const response = await update(created.id, body);
      assert.equal(response.statusCode, 422, JSON.stringify(body));
      assert.deepEqual(json(response), { errors }, JSON.stringify(body));
    }
    assert.deepEqual(
      json(
        await bed.api.app.inject({
          method: "GET",
          url: `/api/v2/deliveries/${created.id}`,
          headers: bed.account.headers,
        }),
      ),
      created,
    );
  });

  test("pricing not answering on a repriced update: 503 and nothing changed", async () => {
    const created = await createOutbound();
    bed.pricing.mode = "silent";
    try {
      const response = await update(created.id, { dropoff: { ...slot(30) } });
      assert.equal(response.statusCode, 503);
      assert.equal(response.headers["retry-after"], "5");
    } finally {
      bed.pricing.mode = "price";
    }
    assert.deepEqual(await events(created.id), ["1:delivery.created"]);
  });

  test("allowed while saved or scheduled; refused once picked up", async () => {
    const created = await createOutbound();
    await setStatus(created.id, "scheduled");
    assert.equal((await update(created.id, { comments: "still fine" })).statusCode, 200);
    await setStatus(created.id, "picked_up");
    const response = await update(created.id, { comments: "too late" });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(json(response), {
      errors: [`delivery ${created.id} cannot be updated once picked_up; only saved or scheduled deliveries can`],
    });
  });

  test("an unknown delivery: 404", async () => {
    const response = await update(987654, { comments: "x" });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(json(response), { errors: ["delivery 987654 not found"] });
  });
});

describe("cancel", () => {
  test("200 with the cancelled delivery, announced by an event", async () => {
    const created = await createOutbound();
    const response = await cancel(created.id);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json(response), { ...created, status: "cancelled" });
    assert.deepEqual(await events(created.id), ["1:delivery.created", "2:delivery.cancelled"]);
  });

  test("an empty JSON body or {} is accepted; any field is refused", async () => {
    const a = await createOutbound();
    assert.equal((await cancel(a.id, "")).statusCode, 200);
    const b = await createOutbound();
    assert.equal((await cancel(b.id, "{}")).statusCode, 200);
    const c = await createOutbound();
    const refused = await cancel(c.id, '{"reason":"changed my mind"}');
    assert.equal(refused.statusCode, 422);
    assert.deepEqual(json(refused), { errors: ["body must be empty: cancel takes no fields"] });
  });

  test("cancelling twice, or once picked up: 422", async () => {
    const created = await createOutbound();
    await cancel(created.id);
    const again = await cancel(created.id);
    assert.equal(again.statusCode, 422);
    assert.deepEqual(json(again), { errors: [`delivery ${created.id} is already cancelled`] });
    const other = await createOutbound();
    await setStatus(other.id, "scheduled");
    await setStatus(other.id, "picked_up");
    const late = await cancel(other.id);
    assert.equal(late.statusCode, 422);
    assert.deepEqual(json(late), {
      errors: [`delivery ${other.id} cannot be cancelled once picked_up; only saved or scheduled deliveries can`],
    });
  });

  test("a scheduled delivery can be cancelled; a cancelled one cannot be updated", async () => {
    const created = await createOutbound();
    await setStatus(created.id, "scheduled");
    assert.equal((await cancel(created.id)).statusCode, 200);
    const response = await update(created.id, { comments: "x" });
    assert.deepEqual(json(response), {
      errors: [`delivery ${created.id} cannot be updated once cancelled; only saved or scheduled deliveries can`],
    });
  });

  test("an unknown delivery: 404", async () => {
    const response = await cancel(55555);
    assert.equal(response.statusCode, 404);
    assert.deepEqual(json(response), { errors: ["delivery 55555 not found"] });
  });
});

describe("status changes by dispatch (operator API)", () => {
  test("follow the state machine and are announced as status_changed", async () => {
    const created = await createOutbound();
    await setStatus(created.id, "scheduled");
    const refused = await bed.api.app.inject({
      method: "PATCH",
      url: `/ops/v1/deliveries/${created.id}/status`,
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
      payload: { status: "cancelled" },
    });
    assert.equal(refused.statusCode, 422);
    assert.deepEqual(json(refused), {
      errors: ["status cannot change from scheduled to cancelled; allowed: saved, picked_up, delivered, failed"],
    });
    await setStatus(created.id, "delivered");
    const delivered = json(
      await bed.api.app.inject({
        method: "GET",
        url: `/api/v2/deliveries/${created.id}`,
        headers: bed.account.headers,
      }),
    );
    assert.equal(delivered.status, "delivered");
    assert.match(delivered.dropoff.completed_at, /\+00:00$/);
    assert.deepEqual(await events(created.id), [
      "1:delivery.created",
      "2:delivery.status_changed",
      "3:delivery.status_changed",
    ]);
    const row = await bed.api.db
      .selectFrom("outbox")
      .select("event")
      .where("delivery_id", "=", created.id)
      .where("sequence", "=", 3)
      .executeTakeFirstOrThrow();
    const { payload } = JSON.parse(row.event ?? "");
    assert.equal(payload.previous_status, "scheduled");
    assert.equal(payload.delivery.status, "delivered");
  });

  test("need the operator token", async () => {
    const created = await createOutbound();
    const response = await bed.api.app.inject({
      method: "PATCH",
      url: `/ops/v1/deliveries/${created.id}/status`,
      headers: bed.account.headers,
      payload: { status: "failed" },
    });
    assert.equal(response.statusCode, 401);
  });
});
