/** console's migrations, applied in key order to the `console` schema it owns. */
import type { Migration } from "kysely/migration";
import * as baseline from "./0001_baseline.ts";
import * as staff from "./0002_staff.ts";

export const SCHEMA = "console";

export const migrations: Record<string, Migration> = {
  "0001_baseline": baseline,
  "0002_staff": staff,
};
