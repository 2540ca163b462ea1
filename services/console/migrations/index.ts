/** console's migrations, applied in key order to the `console` schema it owns. */
import type { Migration } from "kysely/migration";
import * as baseline from "./0001_baseline.ts";

export const SCHEMA = "console";

export const migrations: Record<string, Migration> = {
  "0001_baseline": baseline,
};
