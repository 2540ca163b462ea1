/** webhook-dispatcher's migrations, applied in key order to the `webhooks` schema it owns. */
import type { Migration } from "kysely/migration";
import * as webhooks from "./2026_11_21_0001_webhooks.ts";
import * as queueFunctions from "./2026_11_21_0002_queue_functions.ts";
import * as eventTraceContext from "./2026_12_10_0003_event_trace_context.ts";
import * as serialisedClaims from "./2026_12_11_0004_serialised_claims.ts";
import * as takeIn from "./2026_12_11_0005_take_in.ts";
import * as intakeClaims from "./2026_12_11_0006_intake_claims.ts";
import * as hotPathWithoutForeignKeys from "./2026_12_11_0007_hot_path_without_foreign_keys.ts";
import * as queueWalks from "./2026_12_12_0008_queue_walks.ts";
import * as fewerMessageIndexes from "./2026_12_12_0009_fewer_message_indexes.ts";
import * as slotsKeepTheirQueues from "./2026_12_12_0010_slots_keep_their_queues.ts";
import * as partitionedDispatch from "./2026_12_20_0011_partitioned_dispatch.ts";

export const SCHEMA = "webhooks";

export const migrations: Record<string, Migration> = {
  "2026_11_21_0001_webhooks": webhooks,
  "2026_11_21_0002_queue_functions": queueFunctions,
  "2026_12_10_0003_event_trace_context": eventTraceContext,
  "2026_12_11_0004_serialised_claims": serialisedClaims,
  "2026_12_11_0005_take_in": takeIn,
  "2026_12_11_0006_intake_claims": intakeClaims,
  "2026_12_11_0007_hot_path_without_foreign_keys": hotPathWithoutForeignKeys,
  "2026_12_12_0008_queue_walks": queueWalks,
  "2026_12_12_0009_fewer_message_indexes": fewerMessageIndexes,
  "2026_12_12_0010_slots_keep_their_queues": slotsKeepTheirQueues,
  "2026_12_20_0011_partitioned_dispatch": partitionedDispatch,
};
