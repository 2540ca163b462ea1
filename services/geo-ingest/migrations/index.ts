/** geo-ingest's migrations, applied in key order to the `geo` schema it owns. */
import type { Migration } from "kysely/migration";
import * as vehiclePositions from "./2026_11_21_0001_vehicle_positions.ts";

export const SCHEMA = "geo";

export const migrations: Record<string, Migration> = {
  "2026_11_21_0001_vehicle_positions": vehiclePositions,
};
