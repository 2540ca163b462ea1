/**
 * Vehicles: External ID (the `vehicle_id` of the geolocation interface), tracker provider, and an
 * optional provider token kept only as its SHA-256. Every change writes the vehicle's FLEET entry
 * through the fleet outbox in the same transaction.
 */
import { createHash } from "node:crypto";
import { formatTimestamp, Timestamp } from "@dos/contracts";
import { isUniqueViolation, notFound, unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { DB, Db } from "../../db/database.ts";
import { optionalText, requiredText } from "../../lib/text.ts";
import { lockVehicles, recordFleetState } from "../fleet/fleet.repository.ts";
import { findVehicle, insertVehicle, listVehicleIds, updateVehicle } from "./vehicles.repository.ts";

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
    created_at: Timestamp,
  },
  { title: "Vehicle" },
);

async function vehicleView(db: Db, id: number): Promise<Static<typeof Vehicle>> {
  const row = await findVehicle(db, id);
  if (!row) throw notFound(`vehicle ${id}`);
  return {
    id: row.id,
    external_id: row.external_id,
    provider: row.provider,
    label: row.label,
    has_provider_token: row.provider_token_sha256 !== null,
    active_round_id: row.active_round_id,
    created_at: formatTimestamp(row.created_at),
  };
}

export function createVehiclesService(db: Kysely<DB>) {
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
          return vehicleView(trx, id);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw unprocessable(`external_id ${body.external_id} is already a vehicle's`);
        throw error;
      }
    },

    list: async () => Promise.all((await listVehicleIds(db)).map((id) => vehicleView(db, id))),

    get: (id: number) => vehicleView(db, id),

    update(id: number, body: VehicleChange) {
      return db.transaction().execute(async (trx) => {
        if ((await lockVehicles(trx, [id])).length === 0) throw notFound(`vehicle ${id}`);
        if (Object.values(body).every((value) => value === undefined)) return vehicleView(trx, id);
        await updateVehicle(trx, id, {
          provider: body.provider === undefined ? undefined : requiredText(body.provider, "provider"),
          label: body.label === undefined ? undefined : optionalText(body.label),
          // null removes the token: the provider's requests are then accepted without one.
          provider_token_sha256:
            body.provider_token === undefined ? undefined : body.provider_token && sha256(body.provider_token),
        });
        await recordFleetState(trx, [id]);
        return vehicleView(trx, id);
      });
    },
  };
}
