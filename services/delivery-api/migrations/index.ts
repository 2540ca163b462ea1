/** delivery-api's migrations, applied in key order to the `delivery` schema it owns. */
import type { Migration } from "kysely/migration";
import * as baseline from "./0001_baseline.ts";

export const SCHEMA = "delivery";

export const migrations: Record<string, Migration> = {
  "0001_baseline": baseline,
};
