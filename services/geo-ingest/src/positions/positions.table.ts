/** The `vehicle_positions` table as Kysely sees it (hypertable or natively partitioned: same columns). */
import type { ColumnType } from "kysely";

export interface VehiclePositionsTable {
  vehicle_external_id: string;
  recorded_at: ColumnType<Date, string, never>;
  received_at: ColumnType<Date, string, never>;
  round_id: number;
  provider: string;
  tracker_id: number | null;
  latitude: number;
  longitude: number;
}

/** The `geo` schema. */
export interface DB {
  vehicle_positions: VehiclePositionsTable;
}

/** A position accepted by the hot path, waiting for its batch. */
export interface PositionRow {
  vehicleExternalId: string;
  /** Milliseconds since the epoch; a server stamp moved off a collision carries microseconds. */
  recordedMs: number;
  receivedMs: number;
  /** The body had no timestamp: recordedMs is the time of the call, ours to move if it collides. */
  serverStamped: boolean;
  roundId: number;
  provider: string;
  trackerId: number | null;
  latitude: number;
  longitude: number;
}
