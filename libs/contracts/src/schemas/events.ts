/** The envelope of every delivery event on the DELIVERY_EVENTS stream and in webhooks. */
import { type Static, Type } from "@sinclair/typebox";
import { DELIVERY_EVENT_TYPES } from "../names.ts";
import { Delivery } from "./delivery.ts";

export const DeliveryEventType = Type.Union(DELIVERY_EVENT_TYPES.map((t) => Type.Literal(t)));
export type DeliveryEventType = Static<typeof DeliveryEventType>;

/**
 * Events are versioned and additive: a consumer ignores fields it does not know, so the
 * envelope and payload allow additional properties.
 */
export const DeliveryEvent = Type.Object(
  {
    id: Type.String({ format: "uuid", description: "Event id; also the Nats-Msg-Id and the webhook-id." }),
    type: DeliveryEventType,
    occurred_at: Type.String(),
    account_id: Type.Integer(),
    delivery_id: Type.Integer(),
    sequence: Type.Integer({ minimum: 1, description: "Per-delivery sequence, 1 for the first event." }),
    payload: Type.Object({
      delivery: Delivery,
      previous_status: Type.Optional(Type.String()),
    }),
  },
  { title: "DeliveryEvent" },
);
export type DeliveryEvent = Static<typeof DeliveryEvent>;

/** Most events the timeline of one delivery answers: its latest ones (decided in docs/spec-decisions.md). */
export const DELIVERY_TIMELINE_MAX_EVENTS = 200;

/** One event of a delivery's timeline (beyond the spec): what changed, when, and the status after it. */
export const DeliveryTimelineEvent = Type.Object(
  {
    id: Type.String({ format: "uuid", description: "The event's id, as in the webhook (webhook-id)." }),
    type: DeliveryEventType,
    occurred_at: Type.String(),
    sequence: Type.Integer({ minimum: 1 }),
    status: Type.String({ description: "The delivery's status after the event." }),
    previous_status: Type.Union([Type.String(), Type.Null()], {
      description: "The status before a status change; null for other events.",
    }),
  },
  {
    title: "DeliveryTimelineEvent",
    additionalProperties: false,
    examples: [
      {
        id: "0b8e5a3c-4c1e-4f6a-9d55-2b5c8f0e9a11",
        type: "delivery.status_changed",
        occurred_at: "2026-11-21T09:30:00.000+00:00",
        sequence: 3,
        status: "picked_up",
        previous_status: "scheduled",
      },
    ],
  },
);
export type DeliveryTimelineEvent = Static<typeof DeliveryTimelineEvent>;
