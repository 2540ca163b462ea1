/** pricing's migrations, applied in key order to the `pricing` schema it owns. */
import type { Migration } from "kysely/migration";
import * as baseline from "./0001_baseline.ts";

export const SCHEMA = "pricing";

export const migrations: Record<string, Migration> = {
  "0001_baseline": baseline,
};
