/** pricing's migrations, applied in key order to the `pricing` schema it owns. */
import type { Migration } from "kysely/migration";
import * as tariffs from "./2026_11_21_0001_tariffs.ts";

export const SCHEMA = "pricing";

export const migrations: Record<string, Migration> = {
  "2026_11_21_0001_tariffs": tariffs,
};
