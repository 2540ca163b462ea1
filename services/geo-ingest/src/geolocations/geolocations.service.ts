/**
 * The hot path of POST /external/vehicles/{vehicle_id}/geolocations, after the body has passed
 * the GeolocationInput schema. Checks run in this order, each answering as soon as it fails:
 * fleet loaded (503), vehicle known (404), provider token (401), tracker rate (429), provider
 * and timestamp (422). Then a vehicle without an active round is answered 200 and not stored;
 * any other position is answered only once its batch has committed. No database is read.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { type GeolocationInput, parseTimestamp } from "@dos/contracts";
import {
  cannotStoreNow,
  fleetLoading,
  positionRefused,
  providerMismatch,
  providerTokenInvalid,
  providerTokenMissing,
  timestampInFuture,
  timestampNotADate,
  timestampTooOld,
  trackerIdTooLarge,
  trackerRateLimited,
  vehicleNotFound,
} from "../errors.ts";
import type { FleetCache, VehicleState } from "../fleet/fleet.cache.ts";
import type { GeoMetrics } from "../metrics.ts";
import { PositionRefused, type PositionWriter } from "../positions/position-writer.ts";
import { type RateLimiter, trackerKey } from "./rate-limiter.ts";

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
    const date = parseTimestamp(body.timestamp);
    if (!date) throw timestampNotADate();
    const ms = date.getTime();
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
      const key = trackerKey(vehicleId, body.tracker_id);
      const decision = limiter.take(key, now);
      if (!decision.allowed) {
        metrics.outcome.rate_limited.inc();
        throw trackerRateLimited(options.rateLimitIntervalMs, decision.retryAfterMs);
      }
      let recordedMs: number;
      try {
        recordedMs = recordedAt(vehicle, body, now);
      } catch (error) {
        metrics.outcome.rejected.inc();
        throw error;
      }
      if (vehicle.roundId === null) {
        metrics.outcome.inactive.inc();
        return "inactive";
      }
      if (writer.full) {
        limiter.refund(key, now, decision.previous);
        metrics.outcome.unavailable.inc();
        throw cannotStoreNow();
      }
      try {
        await writer.write({
          vehicleExternalId: vehicleId,
          recordedMs,
          receivedMs: now,
          roundId: vehicle.roundId,
          provider: body.provider,
          trackerId: body.tracker_id ?? null,
          latitude: body.latitude,
          longitude: body.longitude,
        });
      } catch (error) {
        if (error instanceof PositionRefused) {
          metrics.outcome.rejected.inc();
          throw positionRefused();
        }
        // Not stored: give the tracker its slot back so its retry is served, not refused.
        limiter.refund(key, now, decision.previous);
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
