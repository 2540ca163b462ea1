/**
 * Publishes the latest stored position of each vehicle on the bus, off the hot path: committed
 * rows only mark the vehicle's newest position, and a timer publishes what was marked, at most
 * once per interval per vehicle. The VEHICLE_POSITIONS stream keeps one message per vehicle.
 *
 * Publishing is core NATS (the stream captures the subject) rather than an awaited JetStream
 * ack per message: a lost "latest" is superseded within a second, while positions' durability
 * is PostgreSQL's job. This keeps 10,000 publishes per second cheap.
 */
import { formatTimestamp, natsNames, type VehiclePosition } from "@dos/contracts";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";
import type { VehicleState } from "../fleet/fleet.cache.ts";
import type { PositionRow } from "./positions.table.ts";

const SLICE = 500;

export interface LatestPublisher {
  /** Marks committed rows; the newest per vehicle (by tracker time) is published at the next tick. */
  offer(rows: PositionRow[]): void;
  start(): void;
  /** Publishes what is marked, then stops. */
  stop(): Promise<void>;
}

export interface PublisherDeps {
  nc: NatsConnection;
  namespace: string;
  intervalMs: number;
  logger: Logger;
  vehicle(externalId: string): VehicleState | undefined;
  onTick(published: number): void;
}

/**
 * formatTimestamp for a stream of instants close together: the text up to the second is reused
 * while the second does not change (publishing formats two timestamps per vehicle per second).
 */
export function createTimestampFormatter() {
  let second = Number.NaN;
  let prefix = "";
  return (ms: number): string => {
    const s = Math.floor(ms / 1000);
    if (s !== second) {
      second = s;
      prefix = formatTimestamp(new Date(s * 1000)).slice(0, 19);
    }
    return `${prefix}.${String(ms - s * 1000).padStart(3, "0")}+00:00`;
  };
}

export function createLatestPublisher(deps: PublisherDeps): LatestPublisher {
  const names = natsNames(deps.namespace);
  const format = createTimestampFormatter();
  let marked = new Map<string, PositionRow>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const publishMarked = async () => {
    const batch = marked;
    marked = new Map();
    let published = 0;
    for (const [id, row] of batch) {
      // Tens of thousands of vehicles are published each second: in slices, so requests keep
      // being served in between instead of waiting behind one long burst.
      if (published > 0 && published % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const message: VehiclePosition = {
        vehicle_external_id: id,
        round_id: row.roundId,
        latitude: row.latitude,
        longitude: row.longitude,
        recorded_at: format(row.recordedMs),
        received_at: format(row.receivedMs),
        provider: row.provider,
        tracker_id: row.trackerId,
      };
      try {
        deps.nc.publish(names.subjects.vehiclePosition(id), JSON.stringify(message));
        published++;
      } catch (error) {
        // Closed or draining connection: the next position of this vehicle will be published.
        deps.logger.warn({ err: error }, "latest positions not published");
        break;
      }
    }
    deps.onTick(published);
  };

  // A tick that finds the previous one still publishing leaves the marks for the next.
  const tick = () => {
    running ??= publishMarked().finally(() => {
      running = undefined;
    });
  };

  return {
    offer(rows) {
      for (const row of rows) {
        const vehicle = deps.vehicle(row.vehicleExternalId);
        // A late (buffered) position must not replace a newer one as "latest".
        if (!vehicle || row.recordedMs <= vehicle.latestRecordedMs) continue;
        vehicle.latestRecordedMs = row.recordedMs;
        marked.set(row.vehicleExternalId, row);
      }
    },
    start() {
      timer ??= setInterval(tick, deps.intervalMs);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
      await publishMarked();
    },
  };
}
