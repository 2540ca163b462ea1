/**
 * The demo fleet: a messenger, a vehicle in an active round and a vehicle without one, so that
 * `POST <geo_url>/external/vehicles/DEMO-VAN-1/geolocations` stores positions in the demo and
 * DEMO-VAN-2's are answered 200 but not stored. Rows are created only when missing; the FLEET
 * entries of the demo vehicles are written to the fleet outbox on every run, so the running
 * delivery-api's relay (re)puts them into the bucket even when NATS started empty.
 */
import type { Db } from "../db/database.ts";
import { lockVehicles, recordFleetState } from "../dispatch/fleet/fleet.repository.ts";
import { findMessengerIdByName, insertMessenger } from "../dispatch/messengers/messengers.repository.ts";
import { activeRoundIdsOf, insertRound } from "../dispatch/rounds/rounds.repository.ts";
import { ensureVehicle, findVehicle } from "../dispatch/vehicles/vehicles.repository.ts";
import { DEMO_MESSENGER, DEMO_VEHICLES } from "./demo-data.ts";

/** One demo vehicle as var/demo.json lists it. */
export interface DemoVehicle {
  external_id: string;
  provider: string;
  /** Whether it is in an active round now (geo-ingest stores its positions). */
  active: boolean;
}

export async function seedDemoFleet(db: Db): Promise<DemoVehicle[]> {
  const messengerId = await demoMessenger(db);
  const ids: number[] = [];
  for (const data of DEMO_VEHICLES) {
    const { external_id, provider, label } = data;
    const vehicleId = await ensureVehicle(db, { external_id, provider, label });
    ids.push(vehicleId);
    // Locked like every fleet-changing write, so the entry recorded below is the committed state.
    await lockVehicles(db, [vehicleId]);
    // A messenger is in at most one active round: an operator may have put the demo courier elsewhere.
    if (
      data.in_active_round &&
      (await activeRoundIdsOf(db, "vehicle_id", vehicleId)).length === 0 &&
      (await activeRoundIdsOf(db, "messenger_id", messengerId)).length === 0
    ) {
      await insertRound(db, {
        messenger_id: messengerId,
        vehicle_id: vehicleId,
        status: "active",
        started_at: new Date(),
      });
    }
  }
  await recordFleetState(db, ids);

  const vehicles: DemoVehicle[] = [];
  for (const [index, data] of DEMO_VEHICLES.entries()) {
    const stored = await findVehicle(db, ids[index] ?? 0);
    if (!stored) throw new Error(`demo vehicle ${data.external_id} vanished while seeding`);
    vehicles.push({
      external_id: data.external_id,
      provider: stored.provider,
      active: stored.active_round_id !== null,
    });
  }
  return vehicles;
}

async function demoMessenger(db: Db): Promise<number> {
  return (await findMessengerIdByName(db, DEMO_MESSENGER.name)) ?? (await insertMessenger(db, DEMO_MESSENGER)).id;
}
