/** The external geolocation interface and the position messages derived from it. */
import { type Static, Type } from "@sinclair/typebox";
import { Nullable, ShortText, Timestamp } from "./common.ts";
import { MAX_ID } from "./delivery.ts";

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

/** The most positions one vehicle track request may ask for. */
export const VEHICLE_TRACK_MAX_LIMIT = 1000;

/**
 * A request for a vehicle's stored positions, newest first (delivery-api → geo-ingest,
 * `services.geoTrack.subjects.vehicle`): those recorded at or after `since` and before `before`
 * (each optional), at most `limit`.
 */
export const VehicleTrackRequest = Type.Object(
  {
    vehicle_external_id: Type.String({ minLength: 1, maxLength: 100 }),
    since: Type.Optional(Nullable(Timestamp)),
    before: Type.Optional(Nullable(Timestamp)),
    limit: Type.Integer({ minimum: 1, maximum: VEHICLE_TRACK_MAX_LIMIT }),
  },
  { title: "VehicleTrackRequest", additionalProperties: false },
);
export type VehicleTrackRequest = Static<typeof VehicleTrackRequest>;

/** One stored position of a vehicle, as geo-ingest keeps it. */
export const TrackPosition = Type.Object(
  {
    latitude: Type.Number(),
    longitude: Type.Number(),
    recorded_at: Timestamp,
    received_at: Timestamp,
    round_id: Type.Integer({ minimum: 1, maximum: MAX_ID }),
    provider: Type.String(),
    tracker_id: Nullable(Type.Integer()),
  },
  { title: "TrackPosition", additionalProperties: false },
);
export type TrackPosition = Static<typeof TrackPosition>;

/** geo-ingest's answer: the positions newest first. */
export const VehicleTrackReply = Type.Object(
  { positions: Type.Array(TrackPosition, { maxItems: VEHICLE_TRACK_MAX_LIMIT }) },
  { title: "VehicleTrackReply", additionalProperties: false },
);
export type VehicleTrackReply = Static<typeof VehicleTrackReply>;
