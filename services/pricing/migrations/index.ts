/** pricing's migrations, applied in key order to the `pricing` schema it owns. */
import type { Migration } from "kysely/migration";

export const SCHEMA = "pricing";

export const migrations: Record<string, Migration> = {};
