/**
 * The test-environment courier on a short clock (tick 50 ms, step 200 ms), against real
 * PostgreSQL and NATS: a new delivery of an opted-in test account runs through every state with
 * its events and completion fields; `[fail]` in the recipient's name fails it; production
 * accounts are never touched; switching it off stops it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { type DeliveriesTestbed, place, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, getDelivery, opsClient } from "./dispatch-fixtures.ts";
import { createTestAccount, type TestAccount } from "./fixtures.ts";
import { type OpsClient, TIMESTAMP } from "./ops-client.ts";

const STEP_MS = 200;
/** Ten steps of STEP_MS from saved to delivered, with room for a loaded machine. */
const RUN_MS = 15_000;

let bed: DeliveriesTestbed;
let ops: OpsClient;
let testAccount: TestAccount;
before(async () => {
  bed = await startDeliveriesTestbed({ API_SIMULATOR_TICK_MS: "50" });
  await bed.api.start();
  ops = opsClient(bed.api);
  testAccount = await createTestAccount(bed.api.db, { environment: "test" });
  const on = await ops.put(`/accounts/${testAccount.accountId}/courier_simulator`, { enabled: true, step_ms: STEP_MS });
  assert.equal(on.status, 200);
  assert.deepEqual(
    { ...on.body, enabled_at: "" },
    {
      account_id: testAccount.accountId,
      enabled: true,
      step_ms: STEP_MS,
      enabled_at: "",
    },
  );
});
after(async () => bed.close());

async function events(deliveryId: number) {
  const rows = await bed.api.db
    .selectFrom("outbox")
    .select(["type", "event"])
    .where("delivery_id", "=", deliveryId)
    .orderBy("sequence")
    .execute();
  return rows.map((r) => `${r.type}:${JSON.parse(r.event ?? "").payload.delivery.status}`);
}

/** A delivery to zone 75002 (48.87, 2.34), picked up at the default place in 75001 (48.86, 2.34). */
const toZone2 = (account: TestAccount, recipient = "Jeanne Martin") => {
  const body = { dropoff: { ...slotOf(account), place: place(account, { recipient_name: recipient }) } };
  body.dropoff.place.postal_code = account.postalCodes[1];
  return body;
};
const slotOf = (_account: TestAccount) => {
  const start = Date.now() + 24 * 3600_000;
  return {
    slot_starting_at: new Date(start).toISOString(),
    slot_ending_at: new Date(start + 2 * 3600_000).toISOString(),
  };
};

const statusIs = (account: TestAccount, id: number, status: string) => async () =>
  (await getDelivery(bed.api, account, id)).status === status;

describe("test-environment courier simulator", () => {
  test("a new delivery runs saved → scheduled → picked_up → delivered, with events and proof fields", async () => {
    const created = await createDelivery(bed.api, testAccount, toZone2(testAccount));
    assert.equal(created.status, "saved");
    await waitFor(statusIs(testAccount, created.id, "delivered"), RUN_MS, "delivered by the simulator");

    const delivered = await getDelivery(bed.api, testAccount, created.id);
    assert.match(delivered.pickup.completed_at, TIMESTAMP);
    assert.match(delivered.dropoff.completed_at, TIMESTAMP);
    assert.ok(Date.parse(delivered.dropoff.completed_at) > Date.parse(delivered.pickup.completed_at));
    assert.match(delivered.dropoff.tracking_url, /\/track\/[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(delivered.dropoff.completion_signature, {
      url: delivered.dropoff.completion_signature?.url,
      accepted_by: "Jeanne Martin",
    });
    assert.match(delivered.dropoff.completion_signature.url, /\/media\/[A-Za-z0-9_-]+\.png$/);
    assert.equal(delivered.dropoff.completion_pictures.length, 1);
    assert.equal(delivered.dropoff.failure_reason, null);
    assert.equal(delivered.dropoff.notes, "Simulated delivery");
    assert.equal(delivered.pickup.notes, "Simulated pickup");

    assert.deepEqual(await events(created.id), [
      "delivery.created:saved",
      "delivery.status_changed:scheduled",
      "delivery.updated:scheduled",
      "delivery.status_changed:picked_up",
      "delivery.updated:picked_up",
      "delivery.status_changed:delivered",
    ]);

    // The simulated messenger moved from the pickup place to the dropoff; its round ended (the
    // step after the delivery's completion).
    const finished = async () =>
      (
        await bed.api.db
          .selectFrom("simulated_deliveries")
          .select("done")
          .where("delivery_id", "=", created.id)
          .executeTakeFirst()
      )?.done === true;
    await waitFor(finished, RUN_MS, "simulation finished");
    const sim = await bed.api.db
      .selectFrom("simulated_deliveries")
      .selectAll()
      .where("delivery_id", "=", created.id)
      .executeTakeFirstOrThrow();
    assert.equal(sim.done, true);
    const round = await bed.api.db
      .selectFrom("rounds")
      .selectAll()
      .where("id", "=", sim.round_id ?? 0)
      .executeTakeFirstOrThrow();
    assert.equal(round.status, "ended");
    assert.equal(round.simulated, true);
    const position = await bed.api.db
      .selectFrom("round_positions")
      .selectAll()
      .where("round_id", "=", round.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([position.source, position.latitude, position.longitude], ["phone", 48.87, 2.34]);
    // Nothing leaves a test account.
    const sms = await bed.api.db.selectFrom("sms_messages").select("status").execute();
    assert.ok(sms.every((row) => row.status === "suppressed"));
    // Simulated rounds and messengers stay out of the operator's lists.
    assert.ok(!(await ops.get("/rounds")).body.some((r: { id: number }) => r.id === round.id));
  });

  test("a recipient name with [fail] ends failed with a failure_reason", async () => {
    const created = await createDelivery(bed.api, testAccount, toZone2(testAccount, "Absent Person [FAIL]"));
    await waitFor(statusIs(testAccount, created.id, "failed"), RUN_MS, "failed by the simulator");
    const failed = await getDelivery(bed.api, testAccount, created.id);
    assert.equal(failed.dropoff.failure_reason, "recipient absent (simulated)");
    assert.equal(failed.dropoff.notes, "Simulated failure");
    assert.match(failed.dropoff.completed_at, TIMESTAMP);
    assert.equal(failed.dropoff.completion_signature, null);
    assert.deepEqual(failed.dropoff.completion_pictures, []);
    assert.deepEqual((await events(created.id)).slice(-2), [
      "delivery.updated:picked_up",
      "delivery.status_changed:failed",
    ]);
  });

  test("deliveries run side by side, and production accounts are never touched", async () => {
    // The operator API refuses the simulator for a production account...
    const refused = await ops.put(`/accounts/${bed.account.accountId}/courier_simulator`, { enabled: true });
    assert.equal(refused.status, 422);
    assert.deepEqual(refused.body, {
      errors: [`account ${bed.account.accountId} is a production account; the courier simulator is for test accounts`],
    });
    // ...and a setting left from when the account was a test one is ignored.
    await bed.api.db
      .insertInto("courier_simulators")
      .values({ account_id: bed.account.accountId, enabled: true, step_ms: STEP_MS, enabled_at: new Date(0) })
      .execute();
    const production = await createDelivery(bed.api, bed.account);
    const simulated = await Promise.all([1, 2, 3].map(() => createDelivery(bed.api, testAccount)));
    for (const d of simulated) await waitFor(statusIs(testAccount, d.id, "delivered"), RUN_MS, `delivery ${d.id}`);
    assert.equal((await getDelivery(bed.api, bed.account, production.id)).status, "saved");
    assert.deepEqual(await events(production.id), ["delivery.created:saved"]);
    const rows = await bed.api.db
      .selectFrom("simulated_deliveries")
      .select("delivery_id")
      .where("account_id", "=", bed.account.accountId)
      .execute();
    assert.deepEqual(rows, []);
  });

  test("switching it off pauses the deliveries under way; on again, they resume and older ones stay saved", async () => {
    const paused = await createDelivery(bed.api, testAccount);
    await waitFor(statusIs(testAccount, paused.id, "picked_up"), RUN_MS, "picked up");
    const off = await ops.put(`/accounts/${testAccount.accountId}/courier_simulator`, { enabled: false });
    assert.equal(off.body.enabled, false);
    // A step already under way when it was switched off finishes: wait for its row lock.
    await bed.api.db
      .selectFrom("simulated_deliveries")
      .select("step")
      .where("delivery_id", "=", paused.id)
      .forUpdate()
      .execute();
    const frozen = await getDelivery(bed.api, testAccount, paused.id);
    // A witness account's delivery runs its ten steps meanwhile: the clock did tick.
    const witness = await createTestAccount(bed.api.db, { environment: "test" });
    await ops.put(`/accounts/${witness.accountId}/courier_simulator`, { enabled: true, step_ms: STEP_MS });
    const witnessed = await createDelivery(bed.api, witness);
    await waitFor(statusIs(witness, witnessed.id, "delivered"), RUN_MS, "witness delivered");
    assert.deepEqual(await getDelivery(bed.api, testAccount, paused.id), frozen);

    // Switched on again, the paused delivery resumes; one created while it was off is not simulated.
    const whileOff = await createDelivery(bed.api, testAccount);
    await ops.put(`/accounts/${testAccount.accountId}/courier_simulator`, { enabled: true });
    await waitFor(statusIs(testAccount, paused.id, "delivered"), RUN_MS, "resumed and delivered");
    assert.equal((await getDelivery(bed.api, testAccount, whileOff.id)).status, "saved");
  });
});
