/**
 * What must hold after any fault, read from the system's own database and the client's webhook
 * endpoint: every accepted create and position stored, every event published and received by the
 * endpoint in order per delivery, a duplicate always under the first one's webhook-id.
 */
import assert from "node:assert/strict";
import { waitFor } from "@dos/service-kit/testing";
import type pg from "pg";
import type { Load } from "./load.ts";
import { eventsByDelivery, type WebhookReceiver } from "./webhook-receiver.ts";

export interface Tally {
  creates: number;
  positions: number;
  events: number;
  received: number;
  duplicates: number;
}

/** The account's event ids in the outbox, and how many are still unpublished. */
async function outbox(db: pg.Pool, accountId: number) {
  const rows = await db.query<{ id: string; published: boolean }>(
    "select id::text as id, published_at is not null as published from delivery.outbox where account_id = $1",
    [accountId],
  );
  return { ids: rows.rows.map((r) => r.id), unpublished: rows.rows.filter((r) => !r.published).length };
}

/** Waits until every event is published and at the receiver, then checks nothing is lost. */
export async function assertNothingLost(
  db: pg.Pool,
  load: Load,
  receiver: WebhookReceiver,
  accountId: number,
  timeoutMs = 60_000,
): Promise<Tally> {
  const settled = await waitFor(
    async () => {
      const { ids, unpublished } = await outbox(db, accountId);
      const received = new Set(receiver.received.map((r) => r.webhookId));
      return unpublished === 0 && ids.every((id) => received.has(id)) && ids.length;
    },
    timeoutMs,
    "every event published and received",
  );
  // The load goes on: what reached the endpoint before this read must all be in the outbox.
  const arrived = [...receiver.received];
  const { ids } = await outbox(db, accountId);

  const created = load.created();
  const stored = await db.query<{ id: string }>("select id::text as id from delivery.deliveries where id = any($1)", [
    created,
  ]);
  assert.equal(stored.rowCount, created.length, "every create answered 201 is stored");
  const withEvent = await db.query<{ n: string }>(
    "select count(*) as n from delivery.outbox where type = 'delivery.created' and delivery_id = any($1)",
    [created],
  );
  assert.equal(Number(withEvent.rows[0]?.n), created.length, "every stored create has its created event");

  const positions = load.acceptedPositions();
  const found = await db.query<{ n: string }>(
    `select count(*) as n from geo.vehicle_positions p
     join unnest($1::text[], $2::timestamptz[]) as a(vehicle, recorded_at)
       on p.vehicle_external_id = a.vehicle and p.recorded_at = a.recorded_at`,
    [positions.map((p) => p.vehicle), positions.map((p) => p.recordedAt)],
  );
  assert.equal(Number(found.rows[0]?.n), positions.length, "every position answered 200 is stored");

  // Nothing at the endpoint that is not in the outbox, nothing twice under different ids.
  const known = new Set(ids);
  const unknown = arrived.filter((r) => !known.has(r.webhookId));
  assert.deepEqual(unknown, [], "the endpoint received only events of the outbox");
  const idOf = new Map<string, string>();
  for (const r of arrived) {
    const key = `${r.event.delivery_id}#${r.event.sequence}`;
    assert.equal(idOf.get(key) ?? r.webhookId, r.webhookId, `event ${key} arrived under two webhook-ids`);
    idOf.set(key, r.webhookId);
  }
  const deliveries = [...new Set(receiver.received.map((r) => r.event.delivery_id))];
  eventsByDelivery(receiver, deliveries); // throws when an event came before an earlier one of its delivery
  assert.deepEqual(receiver.rejected, [], "every webhook verified");
  return {
    creates: created.length,
    positions: positions.length,
    events: settled,
    received: arrived.length,
    duplicates: arrived.length - new Set(arrived.map((r) => r.webhookId)).size,
  };
}
