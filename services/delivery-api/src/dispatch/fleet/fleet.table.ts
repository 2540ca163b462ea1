/** The FLEET bucket's outbox (migration 0001_baseline). */
import type { FleetEntry } from "@dos/contracts";
import type { Generated, JSONColumnType } from "kysely";
import type { CreatedAt } from "../../db/columns.ts";

export interface FleetOutboxTable {
  id: Generated<number>;
  fleet_key: string;
  /** The entry to put; null deletes the key. */
  entry: JSONColumnType<FleetEntry, string | null, string | null> | null;
  created_at: CreatedAt;
  published_at: Date | null;
}
