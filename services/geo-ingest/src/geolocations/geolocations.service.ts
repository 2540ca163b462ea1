/**
 * The hot path of POST /external/vehicles/{vehicle_id}/geolocations, after the body has passed
 * the GeolocationInput schema. Checks run in this order, each answering as soon as it fails:
 * fleet loaded (503), vehicle known (404), provider token (401), provider, tracker_id and
 * timestamp (422), then the vehicle's rate (429): only a request that passed every check takes
 * the vehicle's slot. Then a vehicle without an active round is answered 200 and not stored;
 * any other position is answered only once its batch has committed (or once the same position
 * is found already stored at its timestamp). No database is read before the write.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { type GeolocationInput, parseTimestampMs } from "@dos/contracts";
import {
  cannotStoreNow,
  fleetLoading,
  positionRefused,
  providerMismatch,
  providerTokenInvalid,
  providerTokenMissing,
  timestampInFuture,
  timestampNotADate,
  timestampTaken,
  timestampTooOld,
  trackerIdTooLarge,
  trackerRateLimited,
  vehicleNotFound,
} from "../errors.ts";
import type { FleetCache, VehicleState } from "../fleet/fleet.cache.ts";
import type { GeoMetrics } from "../metrics.ts";
import { PositionRefused, type PositionWriter, TimestampTaken } from "../positions/position-writer.ts";
import type { RateLimiter } from "./rate-limiter.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface GeolocationsOptions {
  futureToleranceMs: number;
  retentionDays: number;
  rateLimitIntervalMs: number;
}

export interface GeolocationsDeps {
  fleet: FleetCache;
  limiter: RateLimiter;
  writer: PositionWriter;
  metrics: GeoMetrics;
}

export type GeolocationResult = "stored" | "inactive";

export function createGeolocationsService(deps: GeolocationsDeps, options: GeolocationsOptions) {
  const { fleet, limiter, writer, metrics } = deps;
  const maxAgeMs = options.retentionDays * DAY_MS;

  /** Validates the position against the vehicle; returns its tracker time in ms. */
  const recordedAt = (vehicle: VehicleState, body: GeolocationInput, now: number): number => {
    if (body.provider !== vehicle.provider) throw providerMismatch();
    // JSON allows integers beyond what the column (and JavaScript) holds exactly; one such row
    // would fail its whole batch, so it is refused here.
    if (body.tracker_id != null && body.tracker_id > Number.MAX_SAFE_INTEGER) throw trackerIdTooLarge();
    if (body.timestamp == null || body.timestamp === "") return now;
    const ms = parseTimestampMs(body.timestamp);
    if (ms === null) throw timestampNotADate();
    if (ms - now > options.futureToleranceMs) throw timestampInFuture(options.futureToleranceMs);
    if (now - ms > maxAgeMs) throw timestampTooOld(options.retentionDays);
    return ms;
  };

  return {
    async accept(vehicleId: string, body: GeolocationInput, token: unknown): Promise<GeolocationResult> {
      if (!fleet.loaded) {
        metrics.outcome.unavailable.inc();
        throw fleetLoading();
      }
      const vehicle = fleet.get(vehicleId);
      if (!vehicle) {
        metrics.outcome.unknown_vehicle.inc();
        throw vehicleNotFound();
      }
      if (vehicle.tokenSha256) checkProviderToken(vehicle.tokenSha256, token, metrics);

      const now = Date.now();
      let recordedMs: number;
      try {
        recordedMs = recordedAt(vehicle, body, now);
      } catch (error) {
        metrics.outcome.rejected.inc();
        throw error;
      }
      // Only a request that passed every check takes the vehicle's slot: a stranger's wrong
      // provider or oversized tracker_id cannot use up the real tracker's budget.
      const decision = limiter.take(vehicleId, now);
      if (!decision.allowed) {
        metrics.outcome.rate_limited.inc();
        throw trackerRateLimited(options.rateLimitIntervalMs, decision.retryAfterMs);
      }
      if (vehicle.roundId === null) {
        metrics.outcome.inactive.inc();
        return "inactive";
      }
      if (writer.full) {
        limiter.refund(vehicleId, decision);
        metrics.outcome.unavailable.inc();
        throw cannotStoreNow();
      }
      try {
        await writer.write({
          vehicleExternalId: vehicleId,
          recordedMs,
          receivedMs: now,
          serverStamped: body.timestamp == null || body.timestamp === "",
          roundId: vehicle.roundId,
          provider: body.provider,
          trackerId: body.tracker_id ?? null,
          latitude: body.latitude,
          longitude: body.longitude,
        });
      } catch (error) {
        // Not stored, whatever the reason: the slot goes back, so the tracker's next position
        // (or its retry after a 503) is served rather than refused.
        limiter.refund(vehicleId, decision);
        if (error instanceof PositionRefused) {
          metrics.outcome.rejected.inc();
          throw positionRefused();
        }
        if (error instanceof TimestampTaken) {
          metrics.outcome.rejected.inc();
          throw timestampTaken();
        }
        metrics.outcome.unavailable.inc();
        throw cannotStoreNow();
      }
      metrics.outcome.accepted.inc();
      return "stored";
    },
  };
}
export type GeolocationsService = ReturnType<typeof createGeolocationsService>;

/** The token's SHA-256 must equal the fleet entry's, compared in constant time. */
function checkProviderToken(expected: Buffer, token: unknown, metrics: GeoMetrics) {
  if (typeof token !== "string" || token === "") {
    metrics.outcome.unauthorized.inc();
    throw providerTokenMissing();
  }
  const digest = createHash("sha256").update(token).digest();
  if (digest.length !== expected.length || !timingSafeEqual(digest, expected)) {
    metrics.outcome.unauthorized.inc();
    throw providerTokenInvalid();
  }
}
