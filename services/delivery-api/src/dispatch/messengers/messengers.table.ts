/** Messengers of dispatch rounds (migration 0001_baseline). */
import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "../../db/columns.ts";

export interface MessengersTable {
  id: Generated<number>;
  name: string;
  phone: string | null;
  simulated: ColumnType<boolean, boolean | undefined>;
  created_at: CreatedAt;
}
