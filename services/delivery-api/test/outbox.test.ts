/**
 * The outbox on the real bus: the events of create → update → cancel reach JetStream once
 * each, in order, with sequences 1, 2, 3 and the full v2 Delivery; also when the relay dies
 * between publishing and marking (the re-publish is dropped by the stream's duplicate window),
 * and with several relays at once (replicas). A new delivery's first event is published by the
 * process that committed it, without a relay; one its process left behind is a relay's after
 * the grace.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { compileValidator, DeliveryEvent, natsNames } from "@dos/contracts";
import { createDatabase, createLogger, type Database } from "@dos/service-kit";
import { waitFor } from "@dos/service-kit/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { SCHEMA } from "../migrations/index.ts";
import type { DB } from "../src/db/database.ts";
import { createOutboxRelay, type OutboxRelay } from "../src/outbox/outbox.relay.ts";
import { type DeliveriesTestbed, json, outboundBody, startDeliveriesTestbed } from "./delivery-fixtures.ts";

let bed: DeliveriesTestbed;
// A long poll: the built-in relay must be woken by NOTIFY to pass within the wait below.
before(async () => {
  bed = await startDeliveriesTestbed({ API_OUTBOX_POLL_MS: "60000" });
});
after(async () => {
  for (const database of replicaDatabases) await database.close();
  await bed.close();
});

const logger = createLogger("relay-test", "silent");
const replicaDatabases: Array<Database<DB>> = [];

/** A relay as another replica would run it: its own pool on the same database. */
function relay(beforeMark?: (ids: string[]) => void, firstEventGraceMs?: number): OutboxRelay {
  const database = createDatabase<DB>({
    url: bed.api.config.DATABASE_URL,
    schema: SCHEMA,
    applicationName: "relay-replica",
  });
  replicaDatabases.push(database);
  return createOutboxRelay({
    db: database.db,
    pool: database.pool,
    nc: bed.api.nats.nc,
    logger,
    pollMs: 50,
    beforeMark,
    firstEventGraceMs,
  });
}

async function create(): Promise<number> {
  const response = await bed.api.app.inject({
    method: "POST",
    url: "/api/v2/deliveries",
    headers: bed.account.headers,
    payload: outboundBody(bed.account),
  });
  assert.equal(response.statusCode, 201);
  return json(response).id;
}

/** The fields of a delivery in the order the API answers them (set by lifecycle()). */
let representationKeys: string[] = [];

/** Create → update → cancel of one delivery; returns its id. */
async function lifecycle(): Promise<number> {
  const headers = bed.account.headers;
  const created = json(
    await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers,
      payload: outboundBody(bed.account),
    }),
  );
  const updated = await bed.api.app.inject({
    method: "PATCH",
    url: `/api/v2/deliveries/${created.id}`,
    headers,
    payload: { comments: "Ring twice" },
  });
  assert.equal(updated.statusCode, 200);
  const cancelled = await bed.api.app.inject({
    method: "PATCH",
    url: `/api/v2/deliveries/${created.id}/cancel`,
    headers,
  });
  assert.equal(cancelled.statusCode, 200);
  representationKeys = Object.keys(json(cancelled));
  return created.id;
}

/** Every message on the stream for one delivery, in stream order (read by sequence: NATS 2.9 has no multi-filter consumers). */
async function streamEvents(
  deliveryId: number,
): Promise<Array<{ subject: string; msgId: string | undefined; event: DeliveryEvent }>> {
  const names = natsNames(bed.api.config.NATS_NAMESPACE);
  const prefix = names.subjects
    .deliveryEvent(bed.account.accountId, deliveryId, "delivery.created")
    .replace(/created$/, "");
  const jsm = await jetstreamManager(bed.api.nats.nc);
  const { state } = await jsm.streams.info(names.streams.deliveryEvents);
  const seen = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const message = await jsm.streams.getMessage(names.streams.deliveryEvents, { seq });
    if (!message?.subject.startsWith(prefix)) continue;
    seen.push({
      subject: message.subject,
      msgId: message.header.get("Nats-Msg-Id"),
      event: message.json<DeliveryEvent>(),
    });
  }
  return seen;
}

function assertLifecycle(events: Awaited<ReturnType<typeof streamEvents>>, deliveryId: number) {
  assert.deepEqual(
    events.map((e) => [e.event.sequence, e.event.type, e.event.payload.delivery.status]),
    [
      [1, "delivery.created", "saved"],
      [2, "delivery.updated", "saved"],
      [3, "delivery.cancelled", "cancelled"],
    ],
  );
  for (const { subject, msgId, event } of events) {
    const checked = validateEvent(event);
    assert.ok(
      checked.ok,
      `the event matches the DeliveryEvent contract: ${JSON.stringify(checked.ok || checked.errors)}`,
    );
    assert.equal(msgId, event.id, "the event id is the Nats-Msg-Id");
    assert.equal(event.delivery_id, deliveryId);
    assert.equal(event.account_id, bed.account.accountId);
    assert.equal(
      subject,
      natsNames(bed.api.config.NATS_NAMESPACE).subjects.deliveryEvent(bed.account.accountId, deliveryId, event.type),
    );
  }
  assert.equal(events[1]?.event.payload.delivery.comments, "Ring twice", "the payload is the full v2 Delivery");
  // Webhook receivers get these bytes as they are: fields in the order docs/webhooks.md shows,
  // and the delivery's in the order GET /api/v2/deliveries/{id} answers them.
  for (const { event } of events) {
    assert.deepEqual(Object.keys(event), [
      "id",
      "type",
      "occurred_at",
      "account_id",
      "delivery_id",
      "sequence",
      "payload",
    ]);
    assert.deepEqual(Object.keys(event.payload.delivery), representationKeys);
  }
  assert.deepEqual(Object.keys(events[2]?.event.payload ?? {}), ["delivery", "previous_status"]);
  assert.equal(events[2]?.event.payload.previous_status, "saved");
}

// Consumers check only the envelope they route by (the dispatcher passes the payload on byte for
// byte), so the full contract is checked here, where the events are produced.
const validateEvent = compileValidator<DeliveryEvent>(DeliveryEvent);

const unpublished = async () =>
  (await bed.api.db.selectFrom("outbox").select("id").where("published_at", "is", null).execute()).length;

describe("a relay killed between publish and mark", () => {
  test("re-publishes after restart, and consumers still see each event once", async () => {
    const id = await lifecycle();
    assert.equal(await unpublished(), 3, "nothing published before a relay runs");
    const crashing = relay(() => {
      throw new Error("killed before marking");
    });
    await assert.rejects(crashing.drain(), /killed before marking/);
    assert.equal(await unpublished(), 3, "published but never marked");
    assert.equal((await streamEvents(id)).length, 3, "the crashed relay did publish");

    const restarted = relay();
    assert.equal(await restarted.drain(), 3, "the restarted relay publishes the three again");
    assert.equal(await unpublished(), 0);
    assertLifecycle(await streamEvents(id), id);
  });
});

describe("a new delivery's first event left unpublished by its process (stopped before publishing)", () => {
  test("is left to that process while young, then published by a relay", async () => {
    const id = await create();
    assert.equal(await unpublished(), 1, "its process's relay is not running: nothing published it");
    assert.equal(await relay(undefined, 60_000).drain(), 0, "younger than the grace: left to its publisher");
    assert.equal(await relay(undefined, 0).drain(), 1, "older than the grace: a relay takes it");
    assert.equal(await unpublished(), 0);
    assert.deepEqual(
      (await streamEvents(id)).map((e) => [e.event.sequence, e.event.type, e.msgId === e.event.id]),
      [[1, "delivery.created", true]],
    );
  });
});

describe("the running relay", () => {
  test("is woken by NOTIFY and publishes each event once, in order", async () => {
    await bed.api.start();
    const id = await lifecycle();
    await waitFor(async () => (await unpublished()) === 0, 5000, "the outbox to be published");
    assertLifecycle(await streamEvents(id), id);
  });

  test("a new delivery's first event is published by the process that committed it, with no NOTIFY or relay pass", async () => {
    // The relay polls once a minute here, and a create sends no NOTIFY: only the publish that
    // follows the commit can put the event on the stream and mark it within the wait.
    const id = await create();
    await waitFor(async () => (await unpublished()) === 0, 5000, "the first event to be published and marked");
    const events = await streamEvents(id);
    assert.deepEqual(
      events.map((e) => [e.event.sequence, e.event.type, e.msgId === e.event.id]),
      [[1, "delivery.created", true]],
    );
    const checked = validateEvent(events[0]?.event);
    assert.ok(
      checked.ok,
      `the event matches the DeliveryEvent contract: ${JSON.stringify(checked.ok || checked.errors)}`,
    );
  });

  test("several relays at once keep every delivery's order and publish nothing twice", async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await lifecycle());
    const replicas = [relay(), relay(), relay()];
    await Promise.all(replicas.map((r) => r.start()));
    await waitFor(async () => (await unpublished()) === 0, 5000, "the outbox to be published");
    await Promise.all(replicas.map((r) => r.stop()));
    for (const id of ids) assertLifecycle(await streamEvents(id), id);
  });
});

test("the stream keeps the events published so far", async () => {
  const jsm = await jetstreamManager(bed.api.nats.nc);
  const info = await jsm.streams.info(natsNames(bed.api.config.NATS_NAMESPACE).streams.deliveryEvents);
  // Seven deliveries created, updated and cancelled, two only created.
  assert.equal(info.state.messages, 7 * 3 + 2);
});
