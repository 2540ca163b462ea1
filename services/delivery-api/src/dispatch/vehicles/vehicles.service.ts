/**
 * Vehicles: External ID (the `vehicle_id` of the geolocation interface), tracker provider, and an
 * optional provider token kept only as its SHA-256. Every change writes the vehicle's FLEET entry
 * through the fleet outbox in the same transaction. The vehicle page shows with it its active
 * round, its tracker's latest position and, from geo-ingest, its recent positions.
 */
import { createHash, randomBytes } from "node:crypto";
import { formatTimestamp, Nullable, Timestamp, TrackPosition, type VehicleTrackRequest } from "@dos/contracts";
import { isUniqueViolation, notFound, unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { DB, Db } from "../../db/database.ts";
import { type PageRequest, pageOf, pageWindow } from "../../lib/paging.ts";
import { optionalText, requiredText } from "../../lib/text.ts";
import { lockVehicles, recordFleetState } from "../fleet/fleet.repository.ts";
import type { VehicleTrackBus } from "./vehicle-track.bus.ts";
import { findVehicle, insertVehicle, listVehicles, updateVehicle, type VehicleRow } from "./vehicles.repository.ts";

export interface VehicleChange {
  provider?: string;
  label?: string | null;
  /** null removes the token. */
  provider_token?: string | null;
}
export interface NewVehicle extends VehicleChange {
  external_id: string;
  provider: string;
}

const sha256 = (token: string) => createHash("sha256").update(token).digest("hex");

/** A vehicle as the operator API shows it: whether it has a provider token, never the token. */
export const Vehicle = Type.Object(
  {
    id: Type.Integer(),
    external_id: Type.String({ description: "The vehicle_id of the geolocation interface." }),
    provider: Type.String(),
    label: Type.Union([Type.String(), Type.Null()]),
    has_provider_token: Type.Boolean(),
    active_round_id: Type.Union([Type.Integer(), Type.Null()]),
    current_round: Nullable(
      Type.Object(
        {
          id: Type.Integer(),
          started_at: Nullable(Timestamp),
          messenger: Type.Object({ id: Type.Integer(), name: Type.String() }, { additionalProperties: false }),
        },
        { additionalProperties: false, description: "The vehicle's active round; null when it is in none." },
      ),
    ),
    last_position: Nullable(
      Type.Object(
        {
          latitude: Type.Number(),
          longitude: Type.Number(),
          recorded_at: Timestamp,
          received_at: Timestamp,
          round_id: Type.Integer(),
        },
        {
          additionalProperties: false,
          description:
            "The latest position its tracker sent during a round (as geo-ingest published it); its age is " +
            "the time since recorded_at. null before any.",
        },
      ),
    ),
    created_at: Timestamp,
  },
  { title: "Vehicle" },
);
type VehicleView = Static<typeof Vehicle>;

/** A rotated provider token, shown once. */
export const VehicleTokenRotated = Type.Composite(
  [
    Vehicle,
    Type.Object({
      provider_token: Type.String({
        description: "The new token, shown in this answer only: give it to the tracker provider (X-Provider-Token).",
      }),
    }),
  ],
  { title: "VehicleTokenRotated" },
);

/** A page of a vehicle's recent positions, newest first. */
export const VehiclePositions = Type.Object(
  {
    vehicle_id: Type.Integer(),
    external_id: Type.String(),
    positions: Type.Array(TrackPosition, { description: "Newest first." }),
    next_before: Type.Union([Timestamp, Type.Null()], {
      description: "Pass as `before` for older positions; null when no more are kept.",
    }),
  },
  { title: "VehiclePositions", additionalProperties: false },
);

function vehicleView(row: VehicleRow): VehicleView {
  return {
    id: row.id,
    external_id: row.external_id,
    provider: row.provider,
    label: row.label,
    has_provider_token: row.provider_token_sha256 !== null,
    active_round_id: row.active_round_id,
    current_round:
      row.active_round_id === null
        ? null
        : {
            id: row.active_round_id,
            started_at: row.active_round_started_at ? formatTimestamp(row.active_round_started_at) : null,
            messenger: { id: row.active_round_messenger_id as number, name: row.active_round_messenger_name as string },
          },
    last_position:
      row.position_recorded_at === null
        ? null
        : {
            latitude: row.position_latitude as number,
            longitude: row.position_longitude as number,
            recorded_at: formatTimestamp(row.position_recorded_at),
            received_at: formatTimestamp(row.position_received_at as Date),
            round_id: row.position_round_id as number,
          },
    created_at: formatTimestamp(row.created_at),
  };
}

async function requireVehicle(db: Db, id: number): Promise<VehicleView> {
  const row = await findVehicle(db, id);
  if (!row) throw notFound(`vehicle ${id}`);
  return vehicleView(row);
}

export interface PositionsPage {
  since?: Date | undefined;
  before?: Date | undefined;
  limit: number;
}

export function createVehiclesService(db: Kysely<DB>, track: VehicleTrackBus) {
  return {
    async create(body: NewVehicle) {
      try {
        return await db.transaction().execute(async (trx) => {
          const id = await insertVehicle(trx, {
            external_id: body.external_id,
            provider: requiredText(body.provider, "provider"),
            label: optionalText(body.label),
            provider_token_sha256: body.provider_token ? sha256(body.provider_token) : null,
          });
          await recordFleetState(trx, [id]);
          return requireVehicle(trx, id);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw unprocessable(`external_id ${body.external_id} is already a vehicle's`);
        throw error;
      }
    },

    async list(page: PageRequest) {
      const { items, hasMore } = pageOf(await listVehicles(db, pageWindow(page)), page);
      return { vehicles: items.map(vehicleView), hasMore };
    },

    get: (id: number) => requireVehicle(db, id),

    update(id: number, body: VehicleChange) {
      return db.transaction().execute(async (trx) => {
        if ((await lockVehicles(trx, [id])).length === 0) throw notFound(`vehicle ${id}`);
        if (Object.values(body).every((value) => value === undefined)) return requireVehicle(trx, id);
        await updateVehicle(trx, id, {
          provider: body.provider === undefined ? undefined : requiredText(body.provider, "provider"),
          label: body.label === undefined ? undefined : optionalText(body.label),
          // null removes the token: the provider's requests are then accepted without one.
          provider_token_sha256:
            body.provider_token === undefined ? undefined : body.provider_token && sha256(body.provider_token),
        });
        await recordFleetState(trx, [id]);
        return requireVehicle(trx, id);
      });
    },

    /**
     * Replaces the vehicle's provider token by a new random one (32 bytes, base64url), returned
     * once: only its SHA-256 is kept, and geo-ingest refuses the old token from the next FLEET
     * update on.
     */
    rotateToken(id: number): Promise<Static<typeof VehicleTokenRotated>> {
      return db.transaction().execute(async (trx) => {
        if ((await lockVehicles(trx, [id])).length === 0) throw notFound(`vehicle ${id}`);
        const token = randomBytes(32).toString("base64url");
        await updateVehicle(trx, id, { provider_token_sha256: sha256(token) });
        await recordFleetState(trx, [id]);
        return { ...(await requireVehicle(trx, id)), provider_token: token };
      });
    },

    /** The vehicle's recent positions, newest first, from geo-ingest. */
    async positions(id: number, page: PositionsPage): Promise<Static<typeof VehiclePositions>> {
      const vehicle = await requireVehicle(db, id);
      const request: VehicleTrackRequest = { vehicle_external_id: vehicle.external_id, limit: page.limit };
      if (page.since) request.since = formatTimestamp(page.since);
      if (page.before) request.before = formatTimestamp(page.before);
      const { positions } = await track.ask(request);
      return {
        vehicle_id: vehicle.id,
        external_id: vehicle.external_id,
        positions,
        next_before: positions.length === page.limit ? (positions.at(-1)?.recorded_at ?? null) : null,
      };
    },
  };
}
