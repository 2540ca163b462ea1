/** delivery-api's migrations, applied in key order to the `delivery` schema it owns. */
import type { Migration } from "kysely/migration";
import * as baseline from "./0001_baseline.ts";
import * as apiTokenLastUse from "./0002_api_token_last_use.ts";

export const SCHEMA = "delivery";

export const migrations: Record<string, Migration> = {
  "0001_baseline": baseline,
  "0002_api_token_last_use": apiTokenLastUse,
};
