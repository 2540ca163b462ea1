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
