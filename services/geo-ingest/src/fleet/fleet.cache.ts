/**
 * The fleet as geo-ingest needs it, held in memory: the FLEET KV bucket (written by
 * delivery-api) is mirrored by the kit's KV mirror, so the hot path never reads a database and a
 * round that starts or ends is honoured as soon as its KV update arrives (milliseconds).
 */
import { compileValidator, FleetEntry, jsonBody, natsNames, vehicleIdFromFleetKey } from "@dos/contracts";
import { createKvMirror, type KvMirror } from "@dos/service-kit";
import type { KvWatchEntry } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";
import type { PositionRow } from "../positions/positions.table.ts";

/** One vehicle, kept small: 100,000 of them must fit in a few tens of MB. */
export interface VehicleState {
  readonly externalId: string;
  readonly provider: string;
  /** The active round, or null when the vehicle is not in use: its positions are not stored. */
  readonly roundId: number | null;
  /** SHA-256 of the provider token, when the operator configured one. */
  readonly tokenSha256: Buffer | null;
  /**
   * The newest stored position (by tracker time), kept for the publisher: one object per vehicle,
   * overwritten in place, so the positions of the last second are not held by a map of their own.
   */
  latest: LatestPosition | null;
  /** True while the vehicle waits in the publisher's list for its next tick. */
  latestMarked: boolean;
  /** When the publisher last published this vehicle (performance.now() ms; -Infinity: never). */
  publishedMs: number;
}

/** A vehicle's newest stored position, as the publisher sends it. */
export type LatestPosition = Omit<PositionRow, "vehicleExternalId">;

/** The mirror's state (loaded, revision, check for readiness) and lifecycle, and the fleet's. */
export interface FleetCache extends Pick<KvMirror, "loaded" | "revision" | "check" | "start" | "stop"> {
  get(vehicleExternalId: string): VehicleState | undefined;
  readonly size: number;
  readonly activeCount: number;
}

const validateEntry = compileValidator<FleetEntry>(FleetEntry);

export function createFleetCache(nc: NatsConnection, namespace: string, logger: Logger): FleetCache {
  const bucket = natsNames(namespace).buckets.fleet;
  const vehicles = new Map<string, VehicleState>();
  // A few providers serve the whole fleet: one copy of each name, not one per vehicle.
  const providers = new Map<string, string>();
  const intern = (name: string) => {
    const known = providers.get(name);
    if (known !== undefined) return known;
    providers.set(name, name);
    return name;
  };
  let activeCount = 0;

  const remove = (id: string) => {
    const previous = vehicles.get(id);
    if (previous?.roundId != null) activeCount--;
    vehicles.delete(id);
  };

  const apply = (entry: KvWatchEntry) => {
    const id = vehicleIdFromFleetKey(entry.key);
    remove(id);
    if (entry.operation !== "PUT") return;
    const result = validateEntry(jsonBody(entry));
    if (!result.ok) {
      logger.warn({ key: entry.key, revision: entry.revision }, "fleet entry is malformed; vehicle ignored");
      return;
    }
    const { provider, provider_token_sha256: token, active_round_id: roundId } = result.value;
    vehicles.set(id, {
      externalId: id,
      provider: intern(provider),
      roundId,
      tokenSha256: token ? Buffer.from(token, "hex") : null,
      latest: null,
      latestMarked: false,
      publishedMs: Number.NEGATIVE_INFINITY,
    });
    if (roundId != null) activeCount++;
  };

  const mirror = createKvMirror({
    nc,
    bucket,
    logger,
    label: "fleet",
    apply,
    clear() {
      vehicles.clear();
      activeCount = 0;
    },
    onLoaded: () => logger.info({ vehicles: vehicles.size, active: activeCount }, "fleet loaded from the FLEET bucket"),
  });

  return {
    get: (id) => vehicles.get(id),
    get size() {
      return vehicles.size;
    },
    get activeCount() {
      return activeCount;
    },
    get loaded() {
      return mirror.loaded;
    },
    get revision() {
      return mirror.revision;
    },
    check: () => mirror.check(),
    start: () => mirror.start(),
    stop: () => mirror.stop(),
  };
}
