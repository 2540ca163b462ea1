/**
 * A large fleet in active rounds for the live map's tests, and its positions on the bus: the
 * vehicles, messengers and rounds are written in SQL into delivery-api's schema (thousands in a
 * second; what is tested is the map, not how rounds are made), and their latest positions are
 * published as geo-ingest publishes them (VehiclePosition on `geo.positions.<fleet key>`), under
 * the harness's NATS user.
 */
import { formatTimestamp, natsNames, type VehiclePosition } from "@dos/contracts";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import type { SystemUnderTest } from "./system.ts";

export interface LiveFleetVehicle {
  vehicleId: number;
  externalId: string;
  roundId: number;
}

/** `count` vehicles named `<prefix>-00001`…, each with a messenger and an active round started an hour ago. */
export async function seedLiveFleet(
  system: SystemUnderTest,
  count: number,
  prefix: string,
): Promise<LiveFleetVehicle[]> {
  const client = new pg.Client({ connectionString: system.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query("set search_path to delivery");
    const names = `(select $1::text || '-' || lpad(i::text, 5, '0') as name from generate_series(1, $2::int) as i) as s`;
    await client.query(`insert into messengers (name) select 'Messenger ' || s.name from ${names}`, [prefix, count]);
    await client.query(`insert into vehicles (external_id, provider) select s.name, 'live-test' from ${names}`, [
      prefix,
      count,
    ]);
    await client.query(
      `insert into rounds (messenger_id, vehicle_id, status, started_at)
       select m.id, v.id, 'active', now() - interval '1 hour'
       from ${names} join messengers m on m.name = 'Messenger ' || s.name join vehicles v on v.external_id = s.name`,
      [prefix, count],
    );
    const { rows } = await client.query<{ vehicle_id: string; external_id: string; round_id: string }>(
      `select v.id as vehicle_id, v.external_id, r.id as round_id
       from ${names} join vehicles v on v.external_id = s.name join rounds r on r.vehicle_id = v.id and r.status = 'active'`,
      [prefix, count],
    );
    // Statistics as autovacuum keeps them: the live map's statement is planned for the real sizes.
    await client.query("analyze messengers, vehicles, rounds");
    return rows
      .map((row) => ({ vehicleId: Number(row.vehicle_id), externalId: row.external_id, roundId: Number(row.round_id) }))
      .sort((a, b) => a.vehicleId - b.vehicleId);
  } finally {
    await client.end();
  }
}

export interface PositionPublisher {
  /** Publishes the vehicle's latest position as geo-ingest would. */
  publish(vehicle: LiveFleetVehicle, latitude: number, longitude: number, recordedAt: Date): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** A NATS connection of the harness that publishes latest positions on the system's bus. */
export async function positionPublisher(system: SystemUnderTest): Promise<PositionPublisher> {
  const nc: NatsConnection = await connect({ servers: system.nats.url, ...system.nats.harness });
  const names = natsNames(system.nats.namespace);
  return {
    publish(vehicle, latitude, longitude, recordedAt) {
      const stamp = formatTimestamp(recordedAt);
      const message: VehiclePosition = {
        vehicle_external_id: vehicle.externalId,
        round_id: vehicle.roundId,
        latitude,
        longitude,
        recorded_at: stamp,
        received_at: stamp,
        provider: "live-test",
        tracker_id: null,
      };
      nc.publish(names.subjects.vehiclePosition(vehicle.externalId), JSON.stringify(message));
    },
    flush: () => nc.flush(),
    close: () => nc.close(),
  };
}
