import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { TIMESTAMP_PATTERN } from "../timestamps.ts";

/** A timestamp on the wire (see timestamps.ts). */
export const Timestamp = Type.String({
  pattern: TIMESTAMP_PATTERN,
  // The longest the pattern allows (nine fraction digits and an offset): 35 characters.
  maxLength: 35,
  description: "ISO 8601 timestamp with UTC offset, e.g. 2026-11-21T09:30:00.000+01:00",
});

/** The error body of every 4xx and 5xx: each message is a field label followed by the problem. */
export const ErrorBody = Type.Object(
  { errors: Type.Array(Type.String(), { minItems: 1 }) },
  {
    title: "ErrorBody",
    additionalProperties: false,
    examples: [{ errors: ["recipient_phone is not a valid phone number"] }],
  },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Length bounds of free text, decided in docs/spec-decisions.md. */
export const LIMITS = {
  shortText: 255,
  longText: 2000,
  phone: 40,
  email: 254,
  postalCode: 16,
  url: 2048,
  packagesPerDelivery: 100,
  packageAmount: 10_000,
  packageVolumeDm3: 100_000,
  packageWeightKg: 10_000,
} as const;

export const ShortText = (extra: object = {}) => Type.String({ minLength: 1, maxLength: LIMITS.shortText, ...extra });
export const LongText = (extra: object = {}) => Type.String({ maxLength: LIMITS.longText, ...extra });
