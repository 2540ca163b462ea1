/**
 * The group commit's writer against real PostgreSQL: the statement gives each delivery its id and
 * creation time and puts them into the stored event as into the answer; a delivery written again
 * (a batch that committed but whose answer was lost, then retried alone) is answered as first
 * stored, once, while a create the database refuses still fails; only committed deliveries are
 * handed on for their first event to be published.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { formatTimestamp, natsNames } from "@dos/contracts";
import type { DeliveryDraft } from "../src/deliveries/delivery-draft.ts";
import { type DeliveriesDeps, newDelivery } from "../src/deliveries/delivery-writes.ts";
import { createNewDeliveryWriter } from "../src/deliveries/new-delivery-writer.ts";
import { createTestAccount, startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";

let api: TestApi;
let account: TestAccount;
before(async () => {
  api = await startTestApi();
  account = await createTestAccount(api.db);
});
after(async () => api.close());

const place = {
  recipient_name: "Jeanne Martin",
  recipient_phone: "+33 6 12 34 56 78",
  recipient_email: null,
  company_name: null,
  address: "12 Rue de la Paix",
  postal_code: "75001",
  city: "Paris",
  address_instructions: null,
  latitude: 48.86,
  longitude: 2.34,
};
const task = (kind: "pickup" | "dropoff", hours: number) => ({
  kind,
  at_default_place: false,
  saved_address_id: null,
  slot_starting_at: new Date(Date.now() + hours * 3_600_000),
  slot_ending_at: new Date(Date.now() + (hours + 1) * 3_600_000),
  place,
});
const draft: DeliveryDraft = {
  direction: "other",
  sender_display_name: null,
  comments: null,
  client_order_reference: "WRITER-1",
  bring_back_containers: false,
  pickup: task("pickup", 24),
  dropoff: task("dropoff", 26),
  packages: [
    {
      package_type_id: null,
      type: "custom",
      name: "Crate",
      amount: 1,
      volume_dm3: 10,
      weight_kg: 2,
      fragility: null,
      temperature: null,
      client_reference: null,
    },
  ],
};
const price = { price_cents: 700, price_tariff_id: 1, price_lines: "[]" };

function prepared(accountId: number) {
  const deps = { names: natsNames(api.config.NATS_NAMESPACE), trackingBaseUrl: "http://x/track" } as DeliveriesDeps;
  return newDelivery(deps, accountId, draft, price);
}

test("the written delivery's id and creation time are in its answer and its stored event alike", async () => {
  const writer = createNewDeliveryWriter(api.db, api.pool);
  const first = prepared(account.accountId);
  const second = prepared(account.accountId);
  await Promise.all([writer.write(first), writer.write(second)]);
  assert.ok(first.stamp && second.stamp);
  assert.ok(second.delivery.id > first.delivery.id, "ids in the order given");
  for (const written of [first, second]) {
    const stored = await api.db
      .selectFrom("outbox as o")
      .innerJoin("deliveries as d", "d.id", "o.delivery_id")
      .select(["o.event", "o.subject", "d.id", "d.created_at"])
      .where("o.id", "=", written.event.id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.id, written.delivery.id);
    assert.equal(formatTimestamp(stored.created_at), written.delivery.created_at);
    assert.equal(stored.event, written.eventText, "the stored event is the text published, byte for byte");
    assert.equal(stored.subject, written.event.subject);
    const event = JSON.parse(written.eventText);
    assert.equal(event.delivery_id, written.delivery.id);
    assert.deepEqual(event.payload.delivery, written.delivery, "the event carries the delivery answered");
    assert.ok(!written.eventText.includes("\\u0000"), "no placeholder is left");
  }
});

test("a delivery written again (its first answer lost) is answered as first stored, and stored once", async () => {
  const writer = createNewDeliveryWriter(api.db, api.pool);
  const created = prepared(account.accountId);
  // The same create as the writer holds it when its batch failed after committing: unwritten.
  const retried = structuredClone(created);
  const before = await deliveriesOfAccount();
  await writer.write(created);
  await writer.write(retried);
  assert.equal(retried.delivery.id, created.delivery.id);
  assert.equal(retried.delivery.created_at, created.delivery.created_at);
  assert.equal(retried.eventText, created.eventText);
  assert.equal(await deliveriesOfAccount(), before + 1);
});

async function deliveriesOfAccount(): Promise<number> {
  const row = await api.db
    .selectFrom("deliveries")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("account_id", "=", account.accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test("in a batch, a create the database refuses fails alone; the others are stored, and only theirs are announced", async () => {
  const announced: number[] = [];
  const writer = createNewDeliveryWriter(api.db, api.pool, (writes) => {
    for (const write of writes) announced.push(write.delivery.id);
  });
  const good = prepared(account.accountId);
  const refused = prepared(999_999_999); // no such account: a foreign key violation
  const alsoGood = prepared(account.accountId);
  const outcomes = await Promise.allSettled([good, refused, alsoGood].map((d) => writer.write(d)));
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ["fulfilled", "rejected", "fulfilled"],
  );
  assert.equal(refused.stamp, null, "the refused create got no id");
  const stored = await api.db
    .selectFrom("deliveries")
    .select("id")
    .where("id", "in", [good.delivery.id, alsoGood.delivery.id])
    .orderBy("id")
    .execute();
  assert.deepEqual(
    stored.map((row) => row.id),
    [good.delivery.id, alsoGood.delivery.id].toSorted((a, b) => a - b),
  );
  // What is announced is published at once: never an event whose delivery was not stored.
  assert.deepEqual(
    announced.toSorted((a, b) => a - b),
    [good.delivery.id, alsoGood.delivery.id],
  );
});
