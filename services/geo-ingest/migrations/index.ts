/** geo-ingest's migrations, applied in key order to the `geo` schema it owns. */
import type { Migration } from "kysely/migration";

export const SCHEMA = "geo";

export const migrations: Record<string, Migration> = {};
