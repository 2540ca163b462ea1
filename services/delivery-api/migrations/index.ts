/** delivery-api's migrations, applied in key order to the `delivery` schema it owns. */
import type { Migration } from "kysely/migration";
import * as accountsAndDeliveries from "./2026_11_21_0001_accounts_and_deliveries.ts";
import * as dispatch from "./2026_12_01_0002_dispatch.ts";
import * as outboxTraceContext from "./2026_12_10_0003_outbox_trace_context.ts";
import * as housekeepingIndexes from "./2026_12_14_0004_housekeeping_indexes.ts";
import * as outboxEventText from "./2026_12_14_0005_outbox_event_text.ts";
import * as partitionedEventSubjects from "./2026_12_20_0006_partitioned_event_subjects.ts";

export const SCHEMA = "delivery";

export const migrations: Record<string, Migration> = {
  "2026_11_21_0001_accounts_and_deliveries": accountsAndDeliveries,
  "2026_12_01_0002_dispatch": dispatch,
  "2026_12_10_0003_outbox_trace_context": outboxTraceContext,
  "2026_12_14_0004_housekeeping_indexes": housekeepingIndexes,
  "2026_12_14_0005_outbox_event_text": outboxEventText,
  "2026_12_20_0006_partitioned_event_subjects": partitionedEventSubjects,
};
