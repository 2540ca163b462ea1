/**
 * The latest positions on the bus, for every live map stream of this console process: one core
 * NATS subscription to `geo.positions.>` (geo-ingest publishes each vehicle's latest there, at
 * most once a second), held while at least one stream is open. Messages are coalesced per
 * vehicle and handed to the streams in one batch at most once a second: a burst of thousands of
 * vehicles costs one hand-over, and each stream writes one event for it.
 *
 * A batch is handed over GATHER_MS after the first position of a quiet spell (geo-ingest
 * publishes every vehicle in one burst), and never sooner than a second after the previous one.
 */
import { natsNames, type VehiclePosition, vehicleIdFromFleetKey } from "@dos/contracts";
import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import type { Logger } from "pino";

/** A vehicle's latest position as the streams send it. */
export interface LivePosition {
  externalId: string;
  latitude: number;
  longitude: number;
  recordedMs: number;
  /** `,<latitude>,<longitude>,<recorded ms>]`: the end of its entry in a positions event, made once for every stream. */
  wire: string;
}

/** How long the first position of a quiet spell waits for the rest of geo-ingest's burst. */
const GATHER_MS = 100;
/** The shortest time between two batches: each stream sends at most one positions event a second. */
const BATCH_EVERY_MS = 1000;
/** The latest positions are kept this long (a new stream's snapshot is brought up to date with them). */
const KEEP_LATEST_MS = 5 * 60_000;

export interface LivePositions {
  /** Starts receiving (the first stream opens); the batches go to `deliver`. */
  listen(deliver: (batch: Map<string, LivePosition>) => void): void;
  /** Stops receiving (the last stream closed). */
  stop(): void;
  /** The latest position this process received of a vehicle, by its External ID, if recent. */
  latest(externalId: string): LivePosition | undefined;
}

/** A position message as geo-ingest publishes it; anything else is dropped (it could only be a bug). */
function positionOf(subject: string, prefix: string, data: string): LivePosition | undefined {
  let message: Partial<VehiclePosition>;
  try {
    message = JSON.parse(data) as Partial<VehiclePosition>;
  } catch {
    return undefined;
  }
  const { latitude, longitude } = message;
  const recordedMs = typeof message.recorded_at === "string" ? Date.parse(message.recorded_at) : Number.NaN;
  if (typeof latitude !== "number" || typeof longitude !== "number" || !Number.isFinite(recordedMs)) return undefined;
  if (!Number.isFinite(latitude) || !Number.isFinite(longitude)) return undefined;
  // The subject names the vehicle (its fleet key): the body's id must agree with it.
  const externalId = vehicleIdFromFleetKey(subject.slice(prefix.length));
  if (message.vehicle_external_id !== externalId) return undefined;
  return { externalId, latitude, longitude, recordedMs, wire: `,${latitude},${longitude},${recordedMs}]` };
}

export function createLivePositions(deps: {
  nc: NatsConnection;
  namespace: string;
  logger: Logger;
  /** Called for each position taken from the bus (metrics). */
  onReceived(): void;
}): LivePositions {
  const names = natsNames(deps.namespace);
  const subject = names.subjects.vehiclePositionsAll;
  const prefix = subject.slice(0, -1);
  let subscription: Subscription | undefined;
  let changed = new Map<string, LivePosition>();
  const latest = new Map<string, LivePosition>();
  let deliver: ((batch: Map<string, LivePosition>) => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastBatchAt = 0;
  let lastPruneAt = Date.now();

  const handOver = () => {
    timer = undefined;
    lastBatchAt = Date.now();
    const batch = changed;
    changed = new Map();
    deliver?.(batch);
    if (lastBatchAt - lastPruneAt > KEEP_LATEST_MS) {
      lastPruneAt = lastBatchAt;
      for (const [id, position] of latest) if (lastBatchAt - position.recordedMs > KEEP_LATEST_MS) latest.delete(id);
    }
  };

  return {
    listen(receiver) {
      deliver = receiver;
      if (subscription) return;
      subscription = deps.nc.subscribe(subject, {
        callback: (error, message) => {
          if (error) {
            deps.logger.warn({ err: error }, "live positions: subscription error");
            return;
          }
          const position = positionOf(message.subject, prefix, message.string());
          if (!position) return;
          deps.onReceived();
          const previous = latest.get(position.externalId);
          // A late message must not move a vehicle back.
          if (previous && previous.recordedMs > position.recordedMs) return;
          latest.set(position.externalId, position);
          changed.set(position.externalId, position);
          timer ??= setTimeout(handOver, Math.max(GATHER_MS, lastBatchAt + BATCH_EVERY_MS - Date.now()));
        },
      });
    },
    stop() {
      subscription?.unsubscribe();
      subscription = undefined;
      deliver = undefined;
      if (timer) clearTimeout(timer);
      timer = undefined;
      changed = new Map();
      latest.clear();
    },
    latest(externalId) {
      return latest.get(externalId);
    },
  };
}
