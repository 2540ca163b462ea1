/**
 * Dispatch end to end inside delivery-api: vehicles and the FLEET bucket, rounds, every task
 * transition with its events, completion fields, proof images, SMS in production and test
 * accounts (a real local HTTP server plays the provider), and illegal transitions.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { fleetKey } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import {
  createDelivery,
  dispatch,
  fleetBucket,
  getDelivery,
  JPEG,
  opsClient,
  PNG,
  type SmsProvider,
  startSmsProvider,
} from "./dispatch-fixtures.ts";
import { createTestAccount, OPS_TOKEN } from "./fixtures.ts";
import type { OpsClient } from "./ops-client.ts";

let bed: DeliveriesTestbed;
let sms: SmsProvider;
let ops: OpsClient;
before(async () => {
  sms = await startSmsProvider();
  bed = await startDeliveriesTestbed({
    API_SMS_PROVIDER: "http",
    API_SMS_URL: sms.url,
    API_PUBLIC_URL: "https://dos.example",
  });
  await bed.api.start();
  ops = opsClient(bed.api);
});
after(async () => {
  await bed.close();
  await sms.close();
});

async function events(deliveryId: number) {
  const rows = await bed.api.db
    .selectFrom("outbox")
    .select(["type", "event"])
    .where("delivery_id", "=", deliveryId)
    .orderBy("sequence")
    .execute();
  return rows.map((r) => `${r.type}:${JSON.parse(r.event ?? "").payload.delivery.status}`);
}

async function fleetEntry(externalId: string) {
  const kv = await fleetBucket(bed.api);
  const entry = await kv.get(fleetKey(externalId));
  return entry && entry.length > 0 ? entry.json<Record<string, unknown>>() : null;
}

const upload = (path: string, type: string, payload: Buffer, method: "PUT" | "POST" = "POST") =>
  bed.api.app.inject({
    method,
    url: `/ops/v1${path}`,
    headers: { authorization: `Bearer ${OPS_TOKEN}`, "content-type": type },
    payload,
  });

describe("a delivery through every state", () => {
  test("scheduled → picked_up → delivered, with SMS, fleet, proof and events", async () => {
    const created = await createDelivery(bed.api, bed.account);
    const d = await dispatch(ops, created.id, "VAN-1");
    let delivery = await getDelivery(bed.api, bed.account, created.id);
    assert.equal(delivery.status, "scheduled");

    // The vehicle is in the bucket, inactive, before the round starts.
    await waitFor(async () => (await fleetEntry("VAN-1"))?.vehicle_id === d.vehicleId, 1000, "fleet entry");
    assert.equal((await fleetEntry("VAN-1"))?.active_round_id, null);

    const started = Date.now();
    assert.equal((await ops.post(`/rounds/${d.roundId}/start`)).status, 200);
    await waitFor(async () => (await fleetEntry("VAN-1"))?.active_round_id === d.roundId, 1000, "round start in KV");
    assert.ok(Date.now() - started < 1000);
    assert.equal((await fleetEntry("VAN-1"))?.messenger_id, d.messengerId);

    // Completing a task that has not started is refused.
    const early = await ops.post(`/tasks/${d.pickupTask}/complete`, {});
    assert.equal(early.status, 422);
    assert.deepEqual(early.body, { errors: [`task ${d.pickupTask} has not started; start it first`] });

    // The pickup at the default place: tracking link, but no SMS to the client itself.
    const pickupStart = await ops.post(`/tasks/${d.pickupTask}/start`);
    assert.equal(pickupStart.status, 200);
    assert.match(pickupStart.body.pickup.tracking_url, /^https:\/\/dos\.example\/track\/[A-Za-z0-9_-]{22}$/);
    assert.equal(pickupStart.body.dropoff.tracking_url, null);

    const pickedUp = await ops.post(`/tasks/${d.pickupTask}/complete`, { notes: "2 boxes" });
    assert.equal(pickedUp.status, 200);
    assert.equal(pickedUp.body.status, "picked_up");
    assert.ok(pickedUp.body.pickup.completed_at);
    assert.equal(pickedUp.body.dropoff.completed_at, null);
    assert.deepEqual(pickedUp.body.dropoff.completion_pictures, []);

    const dropoffStart = await ops.post(`/tasks/${d.dropoffTask}/start`);
    assert.equal(dropoffStart.status, 200);
    const trackingUrl = dropoffStart.body.dropoff.tracking_url;
    assert.match(trackingUrl, /^https:\/\/dos\.example\/track\//);
    await waitFor(async () => sms.received.length === 1, 2000, "SMS at the provider");
    assert.equal(sms.received[0]?.to, "+33 6 12 34 56 78");
    assert.equal(
      sms.received[0]?.from,
      (
        await bed.api.db
          .selectFrom("accounts")
          .select("company_name")
          .where("id", "=", bed.account.accountId)
          .executeTakeFirstOrThrow()
      ).company_name,
    );
    assert.ok(sms.received[0]?.text.includes(trackingUrl));
    // Starting again is refused and sends nothing more.
    assert.equal((await ops.post(`/tasks/${d.dropoffTask}/start`)).status, 422);

    // Proof: signature and pictures, only as JPEG/PNG.
    const bad = await upload(`/tasks/${d.dropoffTask}/pictures`, "image/png", Buffer.from("not an image"));
    assert.equal(bad.statusCode, 422);
    const signature = await upload(`/tasks/${d.dropoffTask}/signature`, "image/png", PNG, "PUT");
    assert.equal(signature.statusCode, 201, signature.body);
    const picture = await upload(`/tasks/${d.dropoffTask}/pictures`, "image/jpeg", JPEG);
    assert.equal(picture.statusCode, 201);
    const needsName = await ops.post(`/tasks/${d.dropoffTask}/complete`, {});
    assert.deepEqual(needsName.body, { errors: ["accepted_by is required: a signature was uploaded"] });

    delivery = await getDelivery(bed.api, bed.account, created.id);
    assert.equal(delivery.dropoff.completion_signature, null, "no proof before completion");

    const done = await ops.post(`/tasks/${d.dropoffTask}/complete`, {
      accepted_by: "Jeanne Martin",
      notes: "Left with her",
    });
    assert.equal(done.status, 200);
    assert.equal(done.body.status, "delivered");
    assert.equal(done.body.dropoff.notes, "Left with her");
    assert.equal(done.body.dropoff.failure_reason, null);
    assert.deepEqual(done.body.dropoff.completion_signature, {
      url: JSON.parse(signature.body).url,
      accepted_by: "Jeanne Martin",
    });
    assert.deepEqual(done.body.dropoff.completion_pictures, [JSON.parse(picture.body).url]);
    assert.deepEqual(await getDelivery(bed.api, bed.account, created.id), done.body);

    const media = await bed.api.app.inject({ method: "GET", url: new URL(JSON.parse(picture.body).url).pathname });
    assert.equal(media.statusCode, 200);
    assert.equal(media.headers["content-type"], "image/jpeg");
    assert.deepEqual(media.rawPayload, JPEG);

    // delivered is final: every further transition names it.
    const again = await ops.post(`/tasks/${d.dropoffTask}/fail`, { failure_reason: "absent" });
    assert.equal(again.status, 422);
    assert.deepEqual(again.body, { errors: [`task ${d.dropoffTask} is already completed`] });
    const status = await ops.patch(`/deliveries/${created.id}/status`, { status: "failed" });
    assert.deepEqual(status.body, { errors: ["status cannot change from delivered to failed; delivered is final"] });

    assert.deepEqual(await events(created.id), [
      "delivery.created:saved",
      "delivery.status_changed:scheduled",
      "delivery.updated:scheduled",
      "delivery.status_changed:picked_up",
      "delivery.updated:picked_up",
      "delivery.status_changed:delivered",
    ]);

    assert.equal((await ops.post(`/rounds/${d.roundId}/end`)).status, 200);
    await waitFor(async () => (await fleetEntry("VAN-1"))?.active_round_id === null, 1000, "round end in KV");
    assert.equal(sms.received.length, 1, "one SMS per started task that has a recipient");
  });

  test("failure: failed with failure_reason and notes, no proof; a redelivery may follow", async () => {
    const created = await createDelivery(bed.api, bed.account);
    const d = await dispatch(ops, created.id, "VAN-2");
    await ops.post(`/rounds/${d.roundId}/start`);
    await ops.post(`/tasks/${d.pickupTask}/start`);
    await ops.post(`/tasks/${d.pickupTask}/complete`, {});
    await ops.post(`/tasks/${d.dropoffTask}/start`);
    const failed = await ops.post(`/tasks/${d.dropoffTask}/fail`, {
      failure_reason: "recipient absent",
      notes: "rang twice",
    });
    assert.equal(failed.status, 200);
    assert.equal(failed.body.status, "failed");
    assert.equal(failed.body.dropoff.failure_reason, "recipient absent");
    assert.equal(failed.body.dropoff.notes, "rang twice");
    assert.ok(failed.body.dropoff.completed_at);
    assert.equal(failed.body.dropoff.completion_signature, null);
    assert.deepEqual(failed.body.dropoff.completion_pictures, []);
    const redelivery = await bed.api.app.inject({
      method: "POST",
      url: `/api/v2/deliveries/${created.id}/redelivery`,
      headers: bed.account.headers,
      payload: {},
    });
    assert.equal(redelivery.statusCode, 201, redelivery.body);
  });

  test("illegal transitions are refused with the current state", async () => {
    const created = await createDelivery(bed.api, bed.account);
    const d = await dispatch(ops, created.id, "VAN-3");
    // The round has not started.
    const notActive = await ops.post(`/tasks/${d.pickupTask}/start`);
    assert.deepEqual(notActive.body, { errors: [`task ${d.pickupTask} is in round ${d.roundId}, which is planned`] });
    await ops.post(`/rounds/${d.roundId}/start`);
    // A delivery already in a round cannot join another.
    const other = await ops.post("/rounds", { messenger_id: d.messengerId, delivery_ids: [created.id] });
    assert.deepEqual(other.body, { errors: [`delivery ${created.id} is already in round ${d.roundId}`] });
    // The vehicle is busy.
    const second = await ops.post("/rounds", { messenger_id: d.messengerId, vehicle_id: d.vehicleId });
    const busy = await ops.post(`/rounds/${second.body.id}/start`);
    assert.equal(busy.status, 422);
    // A cancelled delivery's task cannot start.
    const cancel = await bed.api.app.inject({
      method: "PATCH",
      url: `/api/v2/deliveries/${created.id}/cancel`,
      headers: bed.account.headers,
    });
    assert.equal(cancel.statusCode, 200);
    const start = await ops.post(`/tasks/${d.pickupTask}/start`);
    assert.deepEqual(start.body, {
      errors: [`task ${d.pickupTask} cannot start: delivery ${created.id} is cancelled`],
    });
    const status = await ops.patch(`/deliveries/${created.id}/status`, { status: "scheduled" });
    assert.deepEqual(status.body, { errors: ["status cannot change from cancelled to scheduled; cancelled is final"] });
    // The round can end: the cancelled delivery is no longer under way.
    assert.equal((await ops.post(`/rounds/${d.roundId}/end`)).status, 200);
    assert.equal((await ops.post(`/rounds/${d.roundId}/start`)).status, 422);
  });

  test("a round ends with unstarted deliveries saved again; not while goods are on board", async () => {
    const a = await createDelivery(bed.api, bed.account);
    const b = await createDelivery(bed.api, bed.account);
    const d = await dispatch(ops, a.id, "VAN-4");
    await ops.post(`/rounds/${d.roundId}/deliveries`, { delivery_id: b.id });
    await ops.post(`/rounds/${d.roundId}/start`);
    await ops.post(`/tasks/${d.pickupTask}/start`);
    await ops.post(`/tasks/${d.pickupTask}/complete`, {});
    const refused = await ops.post(`/rounds/${d.roundId}/end`);
    assert.deepEqual(refused.body, {
      errors: [`round ${d.roundId} cannot end: delivery ${a.id} is picked_up and under way`],
    });
    await ops.post(`/tasks/${d.dropoffTask}/start`);
    await ops.post(`/tasks/${d.dropoffTask}/complete`, {});
    const ended = await ops.post(`/rounds/${d.roundId}/end`);
    assert.equal(ended.status, 200);
    assert.equal((await getDelivery(bed.api, bed.account, b.id)).status, "saved");
    assert.deepEqual(
      ended.body.tasks.map((t: { delivery_id: number }) => t.delivery_id),
      [a.id, a.id],
    );
  });
});

describe("SMS in the test environment", () => {
  test("a test account's task start sends nothing; the message is kept as suppressed", async () => {
    const testAccount = await createTestAccount(bed.api.db, { environment: "test" });
    const before = sms.received.length;
    const created = await createDelivery(bed.api, testAccount);
    const d = await dispatch(ops, created.id, "VAN-TEST");
    await ops.post(`/rounds/${d.roundId}/start`);
    await ops.post(`/tasks/${d.pickupTask}/start`);
    await ops.post(`/tasks/${d.pickupTask}/complete`, {});
    const started = await ops.post(`/tasks/${d.dropoffTask}/start`);
    assert.ok(started.body.dropoff.tracking_url);
    const row = await bed.api.db
      .selectFrom("sms_messages")
      .selectAll()
      .where("task_id", "=", d.dropoffTask)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, "suppressed");
    // A production start right after is sent: had the test one been queued, it would be too.
    const prod = await createDelivery(bed.api, bed.account);
    const p = await dispatch(ops, prod.id, "VAN-PROD");
    await ops.post(`/rounds/${p.roundId}/start`);
    await ops.post(`/tasks/${p.dropoffTask}/start`);
    await waitFor(async () => sms.received.length === before + 1, 2000, "the production SMS");
    assert.ok(sms.received.every((m) => !m.text.includes(started.body.dropoff.tracking_url)));
  });
});

describe("vehicles", () => {
  test("a provider token is stored as SHA-256 and published in the fleet entry; rebuild restores the bucket", async () => {
    const token = "provider-token-0123456789";
    const created = await ops.post("/vehicles", {
      external_id: "TRUCK 7/B",
      provider: "geotrack",
      provider_token: token,
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.has_provider_token, true);
    const sha = createHash("sha256").update(token).digest("hex");
    await waitFor(async () => (await fleetEntry("TRUCK 7/B"))?.provider_token_sha256 === sha, 1000, "token hash");
    const duplicate = await ops.post("/vehicles", { external_id: "TRUCK 7/B", provider: "x" });
    assert.deepEqual(duplicate.body, { errors: ["external_id TRUCK 7/B is already a vehicle's"] });

    const kv = await fleetBucket(bed.api);
    await kv.delete(fleetKey("TRUCK 7/B"));
    await kv.put(fleetKey("GHOST"), "{}");
    const rebuilt = await ops.post("/fleet/rebuild");
    assert.equal(rebuilt.status, 200);
    assert.equal(rebuilt.body.deleted, 1);
    assert.equal((await fleetEntry("TRUCK 7/B"))?.provider, "geotrack");
    assert.equal(await fleetEntry("GHOST"), null);
  });
});
