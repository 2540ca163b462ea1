/**
 * Publishes the latest stored position of each vehicle on the bus, off the hot path: committed
 * rows only mark the vehicle's newest position, and a timer publishes what was marked, at most
 * once per interval per vehicle. The VEHICLE_POSITIONS stream keeps one message per vehicle.
 *
 * The timer ticks TICKS_PER_INTERVAL times per interval and each tick publishes the marked
 * vehicles whose last message is an interval old: a fleet whose trackers post spread over the
 * second is published spread over the second too. One tick per interval published the whole
 * fleet at once (10,000 messages, ~50 ms of this process and more of the NATS server's, every
 * second), a burst that the requests arriving meanwhile waited behind.
 *
 * Publishing is core NATS (the stream captures the subject) rather than an awaited JetStream
 * ack per message: a lost "latest" is superseded within a second, while positions' durability
 * is PostgreSQL's job. This keeps 10,000 publishes per second cheap.
 */
import { formatTimestamp, natsNames, type VehiclePosition } from "@dos/contracts";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";
import type { LatestPosition, VehicleState } from "../fleet/fleet.cache.ts";
import type { PositionRow } from "./positions.table.ts";

const SLICE = 500;
/** Ticks per publish interval: a vehicle's message goes at most one tick after it is due. */
export const TICKS_PER_INTERVAL = 10;

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
function createTimestampFormatter() {
  let second = Number.NaN;
  let prefix = "";
  return (instant: number): string => {
    // Published to the millisecond: a server stamp moved off a collision carries microseconds.
    const ms = Math.floor(instant);
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
  // Vehicles whose latest position changed since the last tick; two lists, swapped at each tick.
  let marked: VehicleState[] = [];
  let spare: VehicleState[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const publishMarked = async (all: boolean) => {
    const batch = marked;
    marked = spare;
    let now = performance.now();
    let published = 0;
    for (let i = 0; i < batch.length; i++) {
      // Tens of thousands of vehicles are published each second: in slices, so requests keep
      // being served in between instead of waiting behind one long burst. The clock is read again
      // after each pause, so that no vehicle is stamped earlier than it was published.
      if (i > 0 && i % SLICE === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        now = performance.now();
      }
      const vehicle = batch[i] as VehicleState;
      // Not yet an interval since its last message: it waits for a later tick, still marked.
      if (!all && now - vehicle.publishedMs < deps.intervalMs) {
        marked.push(vehicle);
        continue;
      }
      // Unmarked before it is read: a position committed from here on marks it for the next tick.
      vehicle.latestMarked = false;
      const latest = vehicle.latest as LatestPosition;
      const message: VehiclePosition = {
        vehicle_external_id: vehicle.externalId,
        round_id: latest.roundId,
        latitude: latest.latitude,
        longitude: latest.longitude,
        recorded_at: format(latest.recordedMs),
        received_at: format(latest.receivedMs),
        provider: latest.provider,
        tracker_id: latest.trackerId,
      };
      try {
        deps.nc.publish(names.subjects.vehiclePosition(vehicle.externalId), JSON.stringify(message));
        vehicle.publishedMs = now;
        published++;
      } catch (error) {
        // Closed or draining connection: the next position of these vehicles will be published.
        deps.logger.warn({ err: error }, "latest positions not published");
        for (let j = i + 1; j < batch.length; j++) (batch[j] as VehicleState).latestMarked = false;
        break;
      }
    }
    batch.length = 0;
    spare = batch;
    deps.onTick(published);
  };

  // A tick that finds the previous one still publishing leaves the marks for the next.
  const tick = () => {
    running ??= publishMarked(false).finally(() => {
      running = undefined;
    });
  };

  return {
    offer(rows) {
      for (const row of rows) {
        const vehicle = deps.vehicle(row.vehicleExternalId);
        // A late (buffered) position must not replace a newer one as "latest".
        if (!vehicle || (vehicle.latest !== null && row.recordedMs <= vehicle.latest.recordedMs)) continue;
        // The row's fields are copied into the vehicle's own object (made at its first position):
        // holding the row would keep every request's row alive until the next one.
        vehicle.latest ??= {} as LatestPosition;
        const latest = vehicle.latest;
        latest.recordedMs = row.recordedMs;
        latest.receivedMs = row.receivedMs;
        latest.roundId = row.roundId;
        latest.provider = row.provider;
        latest.trackerId = row.trackerId;
        latest.latitude = row.latitude;
        latest.longitude = row.longitude;
        if (!vehicle.latestMarked) {
          vehicle.latestMarked = true;
          marked.push(vehicle);
        }
      }
    },
    start() {
      timer ??= setInterval(tick, deps.intervalMs / TICKS_PER_INTERVAL);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
      // The last positions go out whatever their vehicles' last message: nobody publishes after.
      await publishMarked(true);
    },
  };
}
