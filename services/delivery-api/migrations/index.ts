/** delivery-api's migrations, applied in key order to the `delivery` schema it owns. */
import type { Migration } from "kysely/migration";
import * as baseline from "./0001_baseline.ts";
import * as apiTokenLastUse from "./0002_api_token_last_use.ts";
import * as staff from "./0003_staff.ts";
import * as auditLog from "./0004_audit_log.ts";
import * as dispatchReads from "./0005_dispatch_reads.ts";
import * as catalogueChanges from "./0006_catalogue_changes.ts";
import * as auditRetention from "./0007_audit_retention.ts";

export const SCHEMA = "delivery";

export const migrations: Record<string, Migration> = {
  "0001_baseline": baseline,
  "0002_api_token_last_use": apiTokenLastUse,
  "0003_staff": staff,
  "0004_audit_log": auditLog,
  "0005_dispatch_reads": dispatchReads,
  "0006_catalogue_changes": catalogueChanges,
  "0007_audit_retention": auditRetention,
};
