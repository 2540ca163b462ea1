/** Distances on the Earth and the ETA rule (pure functions, unit-tested). */

const EARTH_RADIUS_M = 6_371_008.8;

export interface Point {
  latitude: number;
  longitude: number;
}

/** Great-circle distance in metres (haversine). */
function haversineMetres(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

export interface EtaRule {
  speedKmh: number;
  stopMinutes: number;
}

/** Arrival time: travel at the configured speed, plus the time spent at the stop. */
export function estimateArrival(from: Point, to: Point, now: Date, rule: EtaRule): Date {
  const travelMs = haversineMetres(from, to) / ((rule.speedKmh * 1000) / 3_600_000);
  return new Date(now.getTime() + Math.round(travelMs + rule.stopMinutes * 60_000));
}
