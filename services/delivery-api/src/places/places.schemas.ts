/** Bodies and answers of the operator API for the default place and saved addresses. */
import { LIMITS, LongText, Place, ShortText, Timestamp } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";

const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Number>>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

const required = {
  recipient_name: ShortText(),
  address: ShortText({ description: "Street number and street name only." }),
  postal_code: Type.String({ minLength: 1, maxLength: LIMITS.postalCode }),
  city: ShortText(),
};
const optional = {
  label: nullable(ShortText({ description: "What operators and clients call this place." })),
  recipient_phone: nullable(Type.String({ minLength: 1, maxLength: LIMITS.phone })),
  recipient_email: nullable(Type.String({ format: "email", maxLength: LIMITS.email })),
  company_name: nullable(ShortText()),
  address_instructions: nullable(LongText()),
  latitude: nullable(Type.Number({ minimum: -90, maximum: 90 })),
  longitude: nullable(Type.Number({ minimum: -180, maximum: 180 })),
};

/** A whole place: PUT of the default place, POST of a saved address. */
export const PlaceBody = Type.Object({ ...required, ...optional }, { additionalProperties: false });
export type PlaceBody = Static<typeof PlaceBody>;

/** A partial change of a saved address: fields left out keep their value, null clears an optional one. */
export const PlacePatchBody = Type.Object(
  {
    recipient_name: Type.Optional(required.recipient_name),
    address: Type.Optional(required.address),
    postal_code: Type.Optional(required.postal_code),
    city: Type.Optional(required.city),
    ...optional,
  },
  { additionalProperties: false },
);
export type PlacePatchBody = Static<typeof PlacePatchBody>;

/** The default place or a saved address as the operator API shows it (placeView). */
export const SavedPlace = Type.Composite(
  [
    Type.Object({ id: Type.Integer({ description: "What a task may be given as, for a saved address." }) }),
    Type.Object({ label: Type.Union([Type.String(), Type.Null()]) }),
    Place,
    Type.Object({
      latitude: Type.Union([Type.Number(), Type.Null()]),
      longitude: Type.Union([Type.Number(), Type.Null()]),
      created_at: Timestamp,
    }),
  ],
  { title: "SavedPlace" },
);
export type SavedPlace = Static<typeof SavedPlace>;
