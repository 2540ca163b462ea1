/**
 * The demo fleet: a messenger, a vehicle in an active round and a vehicle without one, so that
 * `POST <geo_url>/external/vehicles/DEMO-VAN-1/geolocations` stores positions in the demo and
 * DEMO-VAN-2's are answered 200 but not stored. Rows are created only when missing; the FLEET
 * entries of the demo vehicles are written to the fleet outbox on every run, so the running
 * delivery-api's relay (re)puts them into the bucket even when NATS started empty.
 */
import type { Db } from "../db/database.ts";
import { lockVehicles, recordFleetState } from "../dispatch/fleet/fleet.repository.ts";
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
    await db
      .insertInto("vehicles")
      .values({ external_id, provider, label })
      .onConflict((oc) => oc.column("external_id").doNothing())
      .execute();
    const vehicle = await db
      .selectFrom("vehicles")
      .select("id")
      .where("external_id", "=", external_id)
      .executeTakeFirstOrThrow();
    ids.push(vehicle.id);
    // Locked like every fleet-changing write, so the entry recorded below is the committed state.
    await lockVehicles(db, [vehicle.id]);
    if (data.in_active_round && !(await activeRoundOf(db, vehicle.id)) && !(await messengerBusy(db, messengerId))) {
      await db
        .insertInto("rounds")
        .values({ messenger_id: messengerId, vehicle_id: vehicle.id, status: "active", started_at: new Date() })
        .execute();
    }
  }
  await recordFleetState(db, ids);

  const vehicles: DemoVehicle[] = [];
  for (const [index, data] of DEMO_VEHICLES.entries()) {
    const stored = await db
      .selectFrom("vehicles")
      .select("provider")
      .where("id", "=", ids[index] ?? 0)
      .executeTakeFirstOrThrow();
    vehicles.push({
      external_id: data.external_id,
      provider: stored.provider,
      active: (await activeRoundOf(db, ids[index] ?? 0)) !== undefined,
    });
  }
  return vehicles;
}

async function demoMessenger(db: Db): Promise<number> {
  const found = await db
    .selectFrom("messengers")
    .select("id")
    .where("name", "=", DEMO_MESSENGER.name)
    .where("simulated", "=", false)
    .orderBy("id")
    .executeTakeFirst();
  if (found) return found.id;
  return (await db.insertInto("messengers").values(DEMO_MESSENGER).returning("id").executeTakeFirstOrThrow()).id;
}

const activeRoundOf = (db: Db, vehicleId: number) =>
  db
    .selectFrom("rounds")
    .select("id")
    .where("vehicle_id", "=", vehicleId)
    .where("status", "=", "active")
    .executeTakeFirst();

/** A messenger is in at most one active round: an operator may have put the demo courier elsewhere. */
async function messengerBusy(db: Db, messengerId: number): Promise<boolean> {
  const round = await db
    .selectFrom("rounds")
    .select("id")
    .where("messenger_id", "=", messengerId)
    .where("status", "=", "active")
    .executeTakeFirst();
  return round !== undefined;
}
