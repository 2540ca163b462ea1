/** The pricing service's request/reply contract on NATS. */
import { type Static, Type } from "@sinclair/typebox";
import { LIMITS, Nullable, Timestamp } from "./common.ts";
import { Direction } from "./delivery.ts";

/** What delivery-api asks for a delivery: its direction, slots, resolved packages and when it was asked. */
export const QuoteRequest = Type.Object(
  {
    account_id: Type.Integer({ minimum: 1 }),
    direction: Direction,
    /** The tasks whose slots the client chose; the shortest slot and the earliest start count. */
    tasks: Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal("pickup"), Type.Literal("dropoff")]),
        slot_starting_at: Timestamp,
        slot_ending_at: Timestamp,
      }),
      { minItems: 1, maxItems: 2 },
    ),
    /** Packages with their catalogue types already resolved to volume and weight (per unit). */
    packages: Type.Array(
      Type.Object({
        amount: Type.Integer({ minimum: 1 }),
        volume_dm3: Type.Number({ minimum: 0 }),
        weight_kg: Type.Number({ minimum: 0 }),
      }),
      { minItems: 1, maxItems: LIMITS.packagesPerDelivery },
    ),
    /** When the client asked; lead time is measured from here, and the tariff in force then applies. */
    requested_at: Timestamp,
  },
  { title: "QuoteRequest", additionalProperties: false },
);
export type QuoteRequest = Static<typeof QuoteRequest>;

/** One itemised part of a price; the lines of a reply add up to its price_cents. */
export const QuoteLine = Type.Object(
  {
    code: Type.String(),
    label: Type.String(),
    amount_cents: Type.Integer(),
  },
  { additionalProperties: false },
);
export type QuoteLine = Static<typeof QuoteLine>;

/** The price (null when the account has no tariff in force), the tariff version used and its lines. */
export const QuoteReply = Type.Object(
  {
    price_cents: Nullable(Type.Integer({ minimum: 0 })),
    tariff_id: Nullable(Type.Integer()),
    lines: Type.Array(QuoteLine),
  },
  { title: "QuoteReply", additionalProperties: false },
);
export type QuoteReply = Static<typeof QuoteReply>;

/**
 * A delivery's price with its breakdown, as quoted at its last change (beyond the spec; the client
 * API's `GET /api/v2/deliveries/{id}/price`): the pricing service's reply, kept with the delivery.
 */
export const DeliveryPrice = Type.Object(QuoteReply.properties, {
  title: "DeliveryPrice",
  additionalProperties: false,
  examples: [
    {
      price_cents: 950,
      tariff_id: 3,
      lines: [
        { code: "base", label: "Base price", amount_cents: 700 },
        { code: "short_slot", label: "Slot shorter than 2 hours", amount_cents: 250 },
      ],
    },
  ],
});
export type DeliveryPrice = Static<typeof DeliveryPrice>;

/**
 * The headers of an error reply of the NATS services framework (ADR-32): a request the service
 * refuses is answered with these, and its body (when any) is an ErrorBody. Such a reply is never a price.
 */
export const SERVICE_ERROR_HEADERS = {
  description: "Nats-Service-Error",
  code: "Nats-Service-Error-Code",
} as const;
