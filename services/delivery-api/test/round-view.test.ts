/**
 * What `GET /ops/v1/rounds/{id}` shows for the staff console's round page: the messenger's name
 * and the vehicle, and for each task where it is (recipient, address, slot), how far it went
 * (state, failure reason) and its proof images, which `GET /ops/v1/media/{id}` serves to any
 * staff role (a read-only person included) and to no one without a token.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, dispatch, opsClient, PNG } from "./dispatch-fixtures.ts";
import { OPS_TOKEN } from "./fixtures.ts";
import type { OpsClient } from "./ops-client.ts";
import { createTestStaff } from "./staff-fixtures.ts";

let bed: DeliveriesTestbed;
let ops: OpsClient;
before(async () => {
  bed = await startDeliveriesTestbed();
  ops = opsClient(bed.api);
});
after(async () => bed.close());

interface ShownTask {
  task_id: number;
  delivery_id: number;
  kind: string;
  state: string;
  failure_reason: string | null;
  recipient_name: string;
  address: string;
  slot_starting_at: string;
  proofs: Array<{ media_id: string; kind: string; content_type: string }>;
}

describe("a round as the round page reads it", () => {
  test("names its messenger and vehicle; each task its place, state, failure reason and proof images", async () => {
    const first = await createDelivery(bed.api, bed.account, { client_order_reference: "VIEW-1" });
    const second = await createDelivery(bed.api, bed.account, { client_order_reference: "VIEW-2" });
    const d = await dispatch(ops, first.id, `VIEW-${Date.now()}`);
    assert.equal((await ops.post(`/rounds/${d.roundId}/deliveries`, { delivery_id: second.id })).status, 200);

    const planned = await ops.get(`/rounds/${d.roundId}`);
    assert.equal(planned.status, 200, JSON.stringify(planned.body));
    assert.deepEqual(planned.body.messenger, { id: d.messengerId, name: "Paul Courier" });
    assert.equal(planned.body.vehicle.id, d.vehicleId);
    assert.match(planned.body.vehicle.external_id, /^VIEW-/);
    const tasks = planned.body.tasks as ShownTask[];
    assert.deepEqual(
      tasks.map((t) => [t.delivery_id, t.kind, t.state]),
      [
        [first.id, "pickup", "to_do"],
        [first.id, "dropoff", "to_do"],
        [second.id, "pickup", "to_do"],
        [second.id, "dropoff", "to_do"],
      ],
    );
    const dropoff = tasks[1] as ShownTask;
    assert.equal(dropoff.recipient_name, first.dropoff.place.recipient_name);
    assert.equal(
      dropoff.address,
      `${first.dropoff.place.address}, ${first.dropoff.place.postal_code} ${first.dropoff.place.city}`,
    );
    assert.equal(Date.parse(dropoff.slot_starting_at), Date.parse(first.dropoff.slot_starting_at));
    assert.deepEqual(dropoff.proofs, []);

    // Under way: a proof picture, listed with the task, then the delivery completed.
    assert.equal((await ops.post(`/rounds/${d.roundId}/start`)).status, 200);
    for (const taskId of [d.pickupTask, d.dropoffTask]) {
      assert.equal((await ops.post(`/tasks/${taskId}/start`)).status, 200);
      if (taskId === d.dropoffTask) {
        const uploaded = await bed.api.app.inject({
          method: "POST",
          url: `/ops/v1/tasks/${taskId}/pictures`,
          headers: { authorization: `Bearer ${OPS_TOKEN}`, "content-type": "image/png" },
          payload: PNG,
        });
        assert.equal(uploaded.statusCode, 201, uploaded.body);
      }
      assert.equal((await ops.post(`/tasks/${taskId}/complete`, {})).status, 200);
    }
    const secondPickup = tasks[2] as ShownTask;
    assert.equal((await ops.post(`/tasks/${secondPickup.task_id}/start`)).status, 200);
    const failed = await ops.post(`/tasks/${secondPickup.task_id}/fail`, { failure_reason: "shop closed" });
    assert.equal(failed.status, 200, JSON.stringify(failed.body));

    const shown = (await ops.get(`/rounds/${d.roundId}`)).body.tasks as ShownTask[];
    assert.deepEqual(
      shown.map((t) => [t.kind, t.state, t.failure_reason]),
      [
        ["pickup", "completed", null],
        ["dropoff", "completed", null],
        ["pickup", "failed", "shop closed"],
        ["dropoff", "to_do", null],
      ],
    );
    const [proof] = (shown[1] as ShownTask).proofs;
    assert.equal(proof?.kind, "picture");
    assert.equal(proof?.content_type, "image/png");

    // The image itself, to any staff role, with its type; never without a token; an unknown id is a 404.
    const readOnly = await createTestStaff(bed.api, "read_only");
    const image = await bed.api.app.inject({
      method: "GET",
      url: `/ops/v1/media/${proof?.media_id}`,
      headers: { authorization: `Bearer ${readOnly.token}` },
    });
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers["content-type"], "image/png");
    assert.deepEqual(image.rawPayload, PNG);
    const anonymous = await bed.api.app.inject({ method: "GET", url: `/ops/v1/media/${proof?.media_id}` });
    assert.equal(anonymous.statusCode, 401);
    const unknown = await readOnly.ops.get(`/media/${"A".repeat(24)}.png`);
    assert.deepEqual([unknown.status, unknown.body], [404, { errors: ["image not found"] }]);
    const malformed = await readOnly.ops.get("/media/..%2F..%2Fetc");
    assert.equal(malformed.status, 404);
  });
});
