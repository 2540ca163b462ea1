/** Tables of dispatch and tracking (migration 0001_baseline). */
import type { FleetEntry } from "@dos/contracts";
import type { ColumnType, Generated, JSONColumnType } from "kysely";

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface MessengersTable {
  id: Generated<number>;
  name: string;
  phone: string | null;
  simulated: ColumnType<boolean, boolean | undefined>;
  created_at: CreatedAt;
}

export interface VehiclesTable {
  id: Generated<number>;
  external_id: string;
  provider: string;
  label: string | null;
  provider_token_sha256: string | null;
  created_at: CreatedAt;
}

export type RoundStatus = "planned" | "active" | "ended";

export interface RoundsTable {
  id: Generated<number>;
  messenger_id: number;
  vehicle_id: number | null;
  status: ColumnType<RoundStatus, RoundStatus | undefined>;
  simulated: ColumnType<boolean, boolean | undefined>;
  started_at: Date | null;
  ended_at: Date | null;
  created_at: CreatedAt;
}

export interface RoundTasksTable {
  round_id: number;
  task_id: number;
  position: number;
  eta_computed_at: Date | null;
}

export type PositionSource = "tracker" | "phone";

export interface RoundPositionsTable {
  round_id: number;
  source: PositionSource;
  latitude: number;
  longitude: number;
  recorded_at: ColumnType<Date, Date | string>;
  received_at: ColumnType<Date, Date | string | undefined>;
}

export type MediaKind = "signature" | "picture";

export interface TaskMediaTable {
  id: string;
  task_id: number;
  kind: MediaKind;
  content_type: "image/jpeg" | "image/png";
  bytes: Buffer;
  created_at: CreatedAt;
}

export type SmsStatus = "pending" | "sent" | "suppressed" | "failed";

export interface SmsMessagesTable {
  id: Generated<number>;
  task_id: number;
  recipient: string;
  sender: string;
  body: string;
  status: ColumnType<SmsStatus, SmsStatus | undefined>;
  attempts: ColumnType<number, number | undefined>;
  last_error: string | null;
  next_attempt_at: ColumnType<Date, Date | string | undefined>;
  sent_at: Date | null;
  created_at: CreatedAt;
}

export interface FleetOutboxTable {
  id: Generated<number>;
  fleet_key: string;
  /** The entry to put; null deletes the key. */
  entry: JSONColumnType<FleetEntry, string | null, string | null> | null;
  created_at: CreatedAt;
  published_at: Date | null;
}

export interface CourierSimulatorsTable {
  account_id: number;
  enabled: boolean;
  step_ms: number;
  enabled_at: ColumnType<Date, Date | string | undefined>;
}

export interface SimulatedDeliveriesTable {
  delivery_id: number;
  account_id: number;
  round_id: number | null;
  step: ColumnType<number, number | undefined>;
  next_at: ColumnType<Date, Date | string>;
  done: ColumnType<boolean, boolean | undefined>;
}
