/** geo-ingest's own metrics, registered once per app on the kit's registry. */
import type { AppMetrics } from "@dos/service-kit";

/** What became of each position posted (one label value per outcome). */
export const OUTCOMES = [
  "accepted",
  "rate_limited",
  "inactive",
  "unknown_vehicle",
  "unauthorized",
  "rejected",
  "unavailable",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export function createGeoMetrics(metrics: AppMetrics) {
  const positions = metrics.counter(
    "geo_positions_total",
    "Positions posted, by outcome: accepted (stored), rate_limited (429), inactive (200, no active round, not stored), unknown_vehicle, unauthorized, rejected (422), unavailable (503).",
    ["outcome"],
  );
  // Pre-bound children: the hot path only increments.
  const outcome = Object.fromEntries(OUTCOMES.map((name) => [name, positions.labels(name)])) as Record<
    Outcome,
    ReturnType<typeof positions.labels>
  >;
  return {
    outcome,
    written: metrics.counter("geo_positions_written_total", "Positions inserted into vehicle_positions."),
    duplicates: metrics.counter(
      "geo_positions_duplicate_total",
      "Positions already stored (same vehicle and timestamp), answered 200 and not stored twice.",
    ),
    writeFailures: metrics.counter("geo_position_write_failures_total", "Positions whose batch failed to commit."),
    batchRows: metrics.histogram(
      "geo_write_batch_rows",
      "Positions per group-commit batch.",
      [],
      [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2000, 5000],
    ),
    writeSeconds: metrics.histogram(
      "geo_write_duration_seconds",
      "Time of one batch INSERT, until committed.",
      [],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ),
    published: metrics.counter("geo_positions_published_total", "Latest positions published on the bus."),
    fleetVehicles: metrics.gauge("geo_fleet_vehicles", "Vehicles known from the FLEET bucket."),
    fleetActive: metrics.gauge("geo_fleet_active_vehicles", "Vehicles in an active round."),
    writeQueue: metrics.gauge("geo_write_queue_rows", "Positions accepted and not yet committed."),
  };
}
export type GeoMetrics = ReturnType<typeof createGeoMetrics>;
