/**
 * What the dispatcher checks of a delivery event read from the stream: the envelope it routes
 * and stores by, with a timestamp PostgreSQL will take. The payload goes to receivers byte for
 * byte; delivery-api's outbox tests check it against the full contract where it is produced
 * (checking the whole Delivery here again cost about 15 µs per event).
 */
import { compileValidator, DeliveryEvent as DeliveryEventSchema, deliveryEventPartition } from "@dos/contracts";
import type { JsMsg } from "@nats-io/jetstream";
import { type Static, Type } from "@sinclair/typebox";
import type { StoredEvent } from "../queue/queue.repository.ts";

const DeliveryEventEnvelope = Type.Composite([
  Type.Omit(DeliveryEventSchema, ["payload", "occurred_at"]),
  Type.Object({ occurred_at: Type.String({ format: "date-time" }), payload: Type.Object({}) }),
]);
export type DeliveryEventEnvelope = Static<typeof DeliveryEventEnvelope>;
const validateEnvelope = compileValidator<DeliveryEventEnvelope>(DeliveryEventEnvelope);

export type ReadEvent = { ok: true; event: DeliveryEventEnvelope; body: string } | { ok: false; problems: string[] };

/** The event a message carries, or why it is not one (never to be sent: it is dropped). */
export function readDeliveryEvent(msg: Pick<JsMsg, "string">, partition?: number): ReadEvent {
  const body = msg.string();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ok: false, problems: ["the body is not JSON"] };
  }
  const checked = validateEnvelope(parsed);
  if (!checked.ok) {
    return { ok: false, problems: checked.errors.slice(0, 3).map((e) => `${e.instancePath || "event"} ${e.message}`) };
  }
  if (partition !== undefined && deliveryEventPartition(checked.value.account_id) !== partition) {
    return { ok: false, problems: [`account ${checked.value.account_id} does not belong to partition ${partition}`] };
  }
  return { ok: true, event: checked.value, body };
}

/** The event as the dispatcher keeps it: its envelope's fields and the exact bytes to POST. */
export function storedEvent(event: DeliveryEventEnvelope, body: string, traceparent: string | null): StoredEvent {
  return {
    id: event.id,
    account_id: event.account_id,
    delivery_id: event.delivery_id,
    sequence: event.sequence,
    type: event.type,
    body,
    occurred_at: event.occurred_at,
    traceparent,
  };
}
