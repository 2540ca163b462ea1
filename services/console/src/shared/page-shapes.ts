/**
 * The shapes the console's backend answers its pages with, where the pages read them as typed
 * values (the System page's reading, the live map's stream): declared once, here, for both the
 * backend (src/) and the pages (web/, which import these types only). Types alone, no imports:
 * the pages' compiler knows neither Node nor the backend's modules.
 */

export type ServiceName = "delivery-api" | "geo-ingest" | "pricing" | "webhook-dispatcher" | "console";
export type ReplicaState = "ready" | "not_ready" | "not_answering";

export interface ReplicaView {
  /** The replica's address (`10.1.2.3:3001`), or `this replica` for the console answering. */
  address: string;
  state: ReplicaState;
  /** Why it is not ready or not answering (its own /readyz messages, or the failure). */
  problems: string[];
}

export interface ServiceView {
  name: ServiceName;
  /** ready: every replica; degraded: some; not_ready: none, though some answered; not_answering: none answered. */
  state: "ready" | "degraded" | "not_ready" | "not_answering";
  replicas: ReplicaView[];
  /** What kept the service from being read at all (its name not resolving). */
  problems: string[];
}

export interface SystemView {
  sampled_at: string;
  sample_seconds: number;
  timeout_ms: number;
  services: ServiceView[];
  webhooks: {
    /** Replicas of webhook-dispatcher whose metrics were read; the figures below are null when none. */
    replicas_read: number;
    /** Pending messages in the dispatcher's queue (the database's, the same for every replica). */
    backlog: number | null;
    oldest_pending_age_seconds: number | null;
    /** Delivery events in the stream not yet taken in, over the replicas. */
    events_not_taken_in: number | null;
    /** Messages dead-lettered since the replicas read started, by reason (`attempts`, `endpoint_disabled`). */
    dead_lettered_since_start: number | null;
    dead_lettered_by_reason: Record<string, number>;
  };
  positions: {
    replicas_read: number;
    /** Replicas read twice in a row (same process): the ones per_second is measured over. */
    replicas_measured: number;
    /** Positions stored per second over window_seconds; null until a replica was read twice. */
    per_second: number | null;
    window_seconds: number | null;
    /** Positions stored since the replicas read started. */
    stored_since_start: number | null;
  };
}

/** A vehicle of the live map as the page gets it: what the table and the map show; its state is the page's to work out. */
export interface LiveVehicleView {
  vehicle_id: number;
  external_id: string;
  label: string | null;
  round_id: number;
  messenger: string;
  /** The next task's ETA is past its slot end, or the slot ended (as of the snapshot). */
  late: boolean;
  position: { latitude: number; longitude: number; recorded_ms: number } | null;
}

/** The live stream's `snapshot` event: the fleet as delivery-api gave it, with the console's clock. */
export interface LiveSnapshotEvent {
  now: number;
  no_position_after_ms: number;
  vehicles: LiveVehicleView[];
}

/** The live stream's `positions` event: `[vehicle_id, latitude, longitude, recorded_ms]` each. */
export interface LivePositionsEvent {
  now: number;
  positions: Array<[number, number, number, number]>;
}
