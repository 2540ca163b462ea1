/** webhook-dispatcher's migrations, applied in key order to the `webhooks` schema it owns. */
import type { Migration } from "kysely/migration";
import * as webhooks from "./2026_11_21_0001_webhooks.ts";

export const SCHEMA = "webhooks";

export const migrations: Record<string, Migration> = {
  "2026_11_21_0001_webhooks": webhooks,
};
