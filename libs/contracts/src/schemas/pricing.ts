/** The pricing service's request/reply contract on NATS. */
import { type Static, Type } from "@sinclair/typebox";
import { Nullable } from "./common.ts";
import { Direction } from "./delivery.ts";

export const QuoteRequest = Type.Object(
  {
    account_id: Type.Integer({ minimum: 1 }),
    direction: Direction,
    tasks: Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal("pickup"), Type.Literal("dropoff")]),
        slot_starting_at: Type.String(),
        slot_ending_at: Type.String(),
      }),
      { minItems: 1, maxItems: 2 },
    ),
    packages: Type.Array(
      Type.Object({
        amount: Type.Integer({ minimum: 1 }),
        volume_dm3: Type.Number({ minimum: 0 }),
        weight_kg: Type.Number({ minimum: 0 }),
      }),
      { minItems: 1 },
    ),
    /** When the client asked; lead time is measured from here, and the tariff in force then applies. */
    requested_at: Type.String(),
  },
  { $id: "QuoteRequest", additionalProperties: false },
);
export type QuoteRequest = Static<typeof QuoteRequest>;

export const QuoteLine = Type.Object(
  {
    code: Type.String(),
    label: Type.String(),
    amount_cents: Type.Integer(),
  },
  { additionalProperties: false },
);
export type QuoteLine = Static<typeof QuoteLine>;

export const QuoteReply = Type.Object(
  {
    price_cents: Nullable(Type.Integer({ minimum: 0 })),
    tariff_id: Nullable(Type.Integer()),
    lines: Type.Array(QuoteLine),
  },
  { $id: "QuoteReply", additionalProperties: false },
);
export type QuoteReply = Static<typeof QuoteReply>;
