/**
 * The group commit's writer against real PostgreSQL: a delivery written again under its own id
 * (a batch that committed but whose answer was lost, then retried alone) is answered as
 * written, once, while a create the database refuses still fails; only committed deliveries are
 * handed on for their first event to be published.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { natsNames } from "@dos/contracts";
import { sql } from "kysely";
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

async function prepared(accountId: number) {
  const { rows } = await sql<{ id: number }>`select nextval('deliveries_id_seq') as id`.execute(api.db);
  const deps = { names: natsNames(api.config.NATS_NAMESPACE), trackingBaseUrl: "http://x/track" } as DeliveriesDeps;
  return newDelivery(deps, accountId, draft, price, { id: Number(rows[0]?.id), createdAt: new Date() });
}

test("a delivery written again under its own id is answered as written, and stored once", async () => {
  const writer = createNewDeliveryWriter(api.db, api.pool);
  const created = await prepared(account.accountId);
  await writer.write(created);
  await writer.write(created);
  const count = (table: "deliveries" | "outbox") =>
    api.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where(table === "deliveries" ? "id" : "delivery_id", "=", created.delivery.id)
      .executeTakeFirstOrThrow();
  assert.equal(Number((await count("deliveries")).n), 1);
  assert.equal(Number((await count("outbox")).n), 1);
});

test("in a batch, a create the database refuses fails alone; the others are stored, and only theirs are announced", async () => {
  const announced: number[] = [];
  const writer = createNewDeliveryWriter(api.db, api.pool, (writes) => {
    for (const write of writes) announced.push(write.rows.delivery.id);
  });
  const good = await prepared(account.accountId);
  const refused = await prepared(999_999_999); // no such account: a foreign key violation
  const alsoGood = await prepared(account.accountId);
  const outcomes = await Promise.allSettled([good, refused, alsoGood].map((d) => writer.write(d)));
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ["fulfilled", "rejected", "fulfilled"],
  );
  const stored = await api.db
    .selectFrom("deliveries")
    .select("id")
    .where("id", "in", [good.delivery.id, refused.delivery.id, alsoGood.delivery.id])
    .orderBy("id")
    .execute();
  assert.deepEqual(
    stored.map((row) => row.id),
    [good.delivery.id, alsoGood.delivery.id],
  );
  // What is announced is published at once: never an event whose delivery was not stored.
  assert.deepEqual(
    announced.toSorted((a, b) => a - b),
    [good.delivery.id, alsoGood.delivery.id],
  );
});
