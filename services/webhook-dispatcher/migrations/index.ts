/** webhook-dispatcher's migrations, applied in key order to the `webhooks` schema it owns. */
import type { Migration } from "kysely/migration";
import * as baseline from "./0001_baseline.ts";

export const SCHEMA = "webhooks";

export const migrations: Record<string, Migration> = {
  "0001_baseline": baseline,
};
