/** Vehicles of dispatch rounds (migration 0001_baseline). */
import type { Generated } from "kysely";
import type { CreatedAt } from "../../db/columns.ts";

export interface VehiclesTable {
  id: Generated<number>;
  external_id: string;
  provider: string;
  label: string | null;
  provider_token_sha256: string | null;
  created_at: CreatedAt;
}
