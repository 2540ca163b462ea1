/**
 * Deliveries from creation to their end, as a client shop, an operator, a tracker fleet and the
 * shop's webhook endpoint meet them, with the four services as processes: outbound, inbound and
 * pickup-and-dropoff deliveries delivered; a failure then a redelivery; a cancel; an update that
 * replaces packages. Each is checked through the client API, the signed webhooks (verified with
 * `standardwebhooks`, in sequence per delivery, nothing missing, nothing unexpected), the track
 * geo-ingest stored and the tracking page.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Delivery } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../src/client.ts";
import { GEO_OPS_TOKEN, type Operator, operator, type Round } from "../src/operator.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";
import {
  eventsByDelivery,
  registerReceiver,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../src/webhook-receiver.ts";

let system: SystemUnderTest;
let account: SeededAccount;
let receiver: WebhookReceiver;
let fleet: Operator;
let api: string;
/** Every event the journeys expect, so that one more anywhere is caught. */
let expectedEvents = 0;

before(async () => {
  system = await bootSystemUnderTest({
    GEO_OPS_TOKEN,
    // Positions of one journey follow each other quickly; the 1/s limit has its own tests.
    GEO_RATE_LIMIT_INTERVAL_MS: "20",
  });
  [account] = seedAccounts(system) as [SeededAccount];
  api = system.url("delivery-api");
  fleet = operator(system.opsUrl, system.url("geo-ingest"));
  receiver = await startWebhookReceiver();
  await registerReceiver(api, clientHeaders(account), receiver);
});
after(async () => {
  await receiver?.close();
  await system?.teardown();
});

const client = (method: string, path: string, body?: unknown) =>
  call(`${api}/api/v2${path}`, method, clientHeaders(account), body);
const getDelivery = async (id: number) => (await client("GET", `/deliveries/${id}`)).body as Delivery;

function slot(hoursAhead: number) {
  const start = new Date(Date.now() + hoursAhead * 3600_000);
  return { slot_starting_at: start.toISOString(), slot_ending_at: new Date(start.getTime() + 7200_000).toISOString() };
}
const place = (name: string) => ({
  recipient_name: name,
  recipient_phone: "+33612345678",
  address: "8 Rue Montorgueil",
  postal_code: account.postal_codes[1] ?? account.postal_codes[0],
  city: "Paris",
});

async function create(body: unknown): Promise<Delivery> {
  const created = await client("POST", "/deliveries", body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body as Delivery;
}

/** Waits until the receiver holds exactly these event types for each delivery, in sequence. */
async function assertWebhooks(expected: Record<number, string[]>) {
  const ids = Object.keys(expected).map(Number);
  const total = Object.values(expected).reduce((sum, types) => sum + types.length, 0);
  expectedEvents += total;
  const count = () => [...eventsByDelivery(receiver, ids).values()].reduce((sum, t) => sum + t.length, 0);
  await waitFor(async () => count() >= total, 15_000, `${total} webhooks`);
  // Anything late and unexpected would arrive within moments of the expected ones.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(Object.fromEntries(eventsByDelivery(receiver, ids)), expected);
  assert.deepEqual(receiver.rejected, [], "every webhook verified");
}

/** The last webhook of a delivery carries it as the client API shows it. */
function lastPayload(deliveryId: number) {
  const events = receiver.firstArrivals().filter((r) => r.event.delivery_id === deliveryId);
  return events.at(-1)?.event.payload.delivery;
}

/**
 * Dispatches one delivery as an operator and a tracker would: round, pickup, positions on the way,
 * dropoff delivered or failed. Returns the round and the latitudes sent while it was active.
 */
async function drive(delivery: Delivery, outcome: "delivered" | "failed"): Promise<{ round: Round; sent: number[] }> {
  const round = await fleet.startRound([delivery.id]);
  assert.equal((await getDelivery(delivery.id)).status, "scheduled");
  const pickup = fleet.task(round, delivery.id, "pickup");
  const dropoff = fleet.task(round, delivery.id, "dropoff");
  await fleet.ops("POST", `/tasks/${pickup}/start`);
  await fleet.ops("POST", `/tasks/${pickup}/complete`, { notes: "collected" });
  assert.equal((await getDelivery(delivery.id)).status, "picked_up");
  const started = (await fleet.ops("POST", `/tasks/${dropoff}/start`)) as Delivery;
  const trackingUrl = started.dropoff?.tracking_url ?? "";
  assert.ok(trackingUrl.startsWith(`${api}/track/`), trackingUrl);

  const sent = [48.88, 48.875, 48.87];
  const at = Date.now() - 10_000;
  // Each stored, not only answered 200: the round may not have reached geo-ingest yet.
  for (const [i, latitude] of sent.entries()) {
    await fleet.storedPosition(round, latitude, 2.34, new Date(at + i * 1000));
  }
  const page = await fetch(trackingUrl);
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
  const state = (await (await fetch(`${trackingUrl}/state`)).json()) as { status: string };
  assert.equal(state.status, "picked_up");

  if (outcome === "delivered") {
    await fleet.ops("POST", `/tasks/${dropoff}/complete`, { notes: "handed over" });
  } else {
    await fleet.ops("POST", `/tasks/${dropoff}/fail`, { failure_reason: "recipient absent", notes: "nobody home" });
  }
  const final = (await (await fetch(`${trackingUrl}/state`)).json()) as { status: string };
  assert.equal(final.status, outcome);
  await fleet.ops("POST", `/rounds/${round.id}/end`);
  // A round's end reaches geo-ingest within a second (its contract); after that a position is
  // answered 200 and not stored.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  assert.equal(await fleet.position(round.vehicle, 48.86, 2.34, new Date(at + 5000)), 200);
  const track = await fleet.track(round.id);
  assert.deepEqual(
    track.map((p) => p.latitude),
    sent,
  );
  return { round, sent };
}

/** The events of a delivery taken through dispatch to its end. */
const DISPATCHED = [
  "delivery.created",
  "delivery.status_changed",
  "delivery.updated",
  "delivery.status_changed",
  "delivery.updated",
  "delivery.status_changed",
];

describe("journeys", () => {
  test("outbound: only a dropoff, delivered", async () => {
    const delivery = await create(outboundDelivery(account, "journey-outbound"));
    assert.equal(delivery.direction, "outbound");
    assert.equal(delivery.status, "saved");
    await drive(delivery, "delivered");
    const final = await getDelivery(delivery.id);
    assert.equal(final.status, "delivered");
    assert.equal(final.dropoff?.notes, "handed over");
    await assertWebhooks({ [delivery.id]: DISPATCHED });
    assert.deepEqual(lastPayload(delivery.id), final);
  });

  test("inbound: only a pickup, brought to the default place", async () => {
    const delivery = await create({
      client_order_reference: "journey-inbound",
      pickup: { ...slot(24), place: place("Return Customer") },
      packages: [{ package_type_id: account.package_type_ids[0], amount: 1 }],
    });
    assert.equal(delivery.direction, "inbound");
    assert.equal(delivery.pickup?.place.recipient_name, "Return Customer");
    await drive(delivery, "delivered");
    const final = await getDelivery(delivery.id);
    assert.equal(final.status, "delivered");
    await assertWebhooks({ [delivery.id]: DISPATCHED });
    assert.deepEqual(lastPayload(delivery.id), final);
  });

  test("pickup and dropoff: both places given, delivered", async () => {
    const delivery = await create({
      client_order_reference: "journey-other",
      pickup: { ...slot(24), place: place("Seller Shop") },
      dropoff: { ...slot(27), place: place("Buyer Home") },
      packages: [{ name: "Lamp", amount: 1, volume_dm3: 12, weight_kg: 3 }],
    });
    assert.equal(delivery.direction, "other");
    await drive(delivery, "delivered");
    const final = await getDelivery(delivery.id);
    assert.equal(final.status, "delivered");
    assert.equal(final.pickup?.place.recipient_name, "Seller Shop");
    assert.equal(final.dropoff?.place.recipient_name, "Buyer Home");
    await assertWebhooks({ [delivery.id]: DISPATCHED });
    assert.deepEqual(lastPayload(delivery.id), final);
  });

  test("a failure, then a redelivery delivered", async () => {
    const original = await create(outboundDelivery(account, "journey-redelivery"));
    await drive(original, "failed");
    const failed = await getDelivery(original.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.dropoff?.failure_reason, "recipient absent");

    const answer = await client("POST", `/deliveries/${original.id}/redelivery`, {
      dropoff: { ...slot(48), place: { recipient_name: "Neighbour" } },
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const redelivery = answer.body as Delivery;
    assert.equal(redelivery.original_delivery_id, original.id);
    assert.equal(redelivery.status, "saved");
    assert.equal(redelivery.dropoff?.place.recipient_name, "Neighbour");
    assert.equal(redelivery.dropoff?.place.address, original.dropoff?.place.address, "kept from the original");
    assert.deepEqual(redelivery.packages, original.packages);
    assert.equal(redelivery.client_order_reference, "journey-redelivery");
    assert.equal((await getDelivery(original.id)).redelivery_id, redelivery.id);
    assert.equal((await getDelivery(original.id)).status, "failed", "the original stays failed");

    await drive(redelivery, "delivered");
    assert.equal((await getDelivery(redelivery.id)).status, "delivered");
    await assertWebhooks({
      [original.id]: [...DISPATCHED, "delivery.redelivery_created"],
      [redelivery.id]: DISPATCHED,
    });
    assert.equal(lastPayload(original.id)?.redelivery_id, redelivery.id);
    const failedEvent = receiver
      .firstArrivals()
      .find((r) => r.event.delivery_id === original.id && r.event.payload.delivery.status === "failed");
    assert.equal(failedEvent?.event.payload.previous_status, "picked_up");
  });

  test("a cancel: 200 with the cancelled delivery, then nothing more may change it", async () => {
    const delivery = await create(outboundDelivery(account, "journey-cancel"));
    const cancelled = await client("PATCH", `/deliveries/${delivery.id}/cancel`);
    assert.equal(cancelled.status, 200);
    assert.equal((cancelled.body as Delivery).status, "cancelled");
    const again = await client("PATCH", `/deliveries/${delivery.id}/cancel`);
    assert.equal(again.status, 422);
    assert.equal((again.body as { errors: string[] }).errors.length, 1);
    const update = await client("PATCH", `/deliveries/${delivery.id}`, { comments: "too late" });
    assert.equal(update.status, 422);
    await assertWebhooks({ [delivery.id]: ["delivery.created", "delivery.cancelled"] });
    const event = receiver.firstArrivals().find((r) => r.event.type === "delivery.cancelled");
    assert.equal(event?.event.payload.previous_status, "saved");
    assert.deepEqual(event?.event.payload.delivery, cancelled.body);
  });

  test("an update that replaces the packages", async () => {
    const delivery = await create({
      ...outboundDelivery(account, "journey-update"),
      packages: [
        { package_type_id: account.package_type_ids[0], amount: 2 },
        { name: "Umbrella", amount: 1, volume_dm3: 2, weight_kg: 0.5, client_reference: "UMB-1" },
      ],
    });
    assert.equal(delivery.packages.length, 2);
    const updated = await client("PATCH", `/deliveries/${delivery.id}`, {
      packages: [{ package_type_id: account.package_type_ids[1], amount: 3 }],
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    const body = updated.body as Delivery;
    assert.equal(body.packages.length, 1);
    assert.equal(body.packages[0]?.package_type_id, account.package_type_ids[1]);
    assert.equal(body.packages[0]?.amount, 3);
    assert.deepEqual(await getDelivery(delivery.id), body);
    await assertWebhooks({ [delivery.id]: ["delivery.created", "delivery.updated"] });
    assert.deepEqual(lastPayload(delivery.id), body);
  });

  test("the endpoint received nothing but those events, and a duplicate only as the same message", () => {
    assert.equal(receiver.firstArrivals().length, expectedEvents);
    const first = new Map(receiver.firstArrivals().map((r) => [r.webhookId, JSON.stringify(r.event)]));
    for (const arrival of receiver.received) assert.equal(JSON.stringify(arrival.event), first.get(arrival.webhookId));
  });
});
