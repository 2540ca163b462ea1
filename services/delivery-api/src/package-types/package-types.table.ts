import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "../db/columns.ts";

export interface PackageTypesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  volume_dm3: number;
  weight_kg: number;
  fragility: string | null;
  temperature: string | null;
  is_size_category: ColumnType<boolean, boolean | undefined>;
  archived_at: Date | null;
  created_at: CreatedAt;
}
