import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "../db/columns.ts";

/** What a person of the operator's staff may do through the operator API (ops-access.ts). */
export type StaffRole = "admin" | "dispatcher" | "read_only";

export interface StaffTable {
  id: Generated<number>;
  /** Lower-cased. */
  email: string;
  name: string;
  role: StaffRole;
  disabled: ColumnType<boolean, boolean | undefined>;
  created_at: CreatedAt;
}

export interface StaffTokensTable {
  id: Generated<number>;
  staff_id: number;
  label: string;
  token_sha256: Buffer;
  created_at: CreatedAt;
  last_used_at: ColumnType<Date | null, never, Date>;
  expires_at: Date | null;
  revoked_at: ColumnType<Date | null, never, Date>;
}
