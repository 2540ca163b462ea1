/** webhook-dispatcher's migrations, applied in key order to the `webhooks` schema it owns. */
import type { Migration } from "kysely/migration";

export const SCHEMA = "webhooks";

export const migrations: Record<string, Migration> = {};
