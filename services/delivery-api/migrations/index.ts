/** delivery-api's migrations, applied in key order to the `delivery` schema it owns. */
import type { Migration } from "kysely/migration";

export const SCHEMA = "delivery";

export const migrations: Record<string, Migration> = {};
