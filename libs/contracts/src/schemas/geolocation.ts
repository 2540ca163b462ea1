/** The external geolocation interface and the position messages derived from it. */
import { type Static, Type } from "@sinclair/typebox";
import { Nullable, ShortText, Timestamp } from "./common.ts";

/** The body a tracker provider posts to /external/vehicles/{vehicle_id}/geolocations. */
export const GeolocationInput = Type.Object(
  {
    timestamp: Type.Optional(Nullable(Type.Union([Timestamp, Type.Literal("")]))),
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    provider: ShortText(),
    tracker_id: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  },
  { title: "GeolocationInput", additionalProperties: false },
);
export type GeolocationInput = Static<typeof GeolocationInput>;

/** The latest position of a vehicle in an active round, published by geo-ingest. */
export const VehiclePosition = Type.Object(
  {
    vehicle_external_id: Type.String(),
    round_id: Type.Integer(),
    latitude: Type.Number(),
    longitude: Type.Number(),
    recorded_at: Type.String(),
    received_at: Type.String(),
    provider: Type.String(),
    tracker_id: Nullable(Type.Integer()),
  },
  { title: "VehiclePosition" },
);
export type VehiclePosition = Static<typeof VehiclePosition>;

/** A FLEET bucket entry: what geo-ingest needs to know of a vehicle, kept exact by delivery-api. */
export const FleetEntry = Type.Object(
  {
    vehicle_external_id: Type.String(),
    vehicle_id: Type.Integer(),
    provider: Type.String(),
    /** SHA-256 (hex) of the provider token, when the operator configured one for this vehicle. */
    provider_token_sha256: Nullable(Type.String()),
    active_round_id: Nullable(Type.Integer()),
    messenger_id: Nullable(Type.Integer()),
    updated_at: Type.String(),
  },
  { title: "FleetEntry" },
);
export type FleetEntry = Static<typeof FleetEntry>;
