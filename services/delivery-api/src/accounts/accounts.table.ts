import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "../db/columns.ts";

export interface AccountsTable {
  id: Generated<number>;
  company_name: string;
  environment: ColumnType<"production" | "test", "production" | "test" | undefined>;
  bring_back_containers: ColumnType<boolean, boolean | undefined>;
  default_task_gap_minutes: ColumnType<number, number | undefined>;
  default_task_duration_minutes: ColumnType<number, number | undefined>;
  recipient_phone_optional: ColumnType<boolean, boolean | undefined>;
  phone_default_region: ColumnType<string, string | undefined>;
  /** The operator's override of the client API limit; both null: the default. */
  rate_limit_quota: ColumnType<number | null, number | null | undefined>;
  rate_limit_window_seconds: ColumnType<number | null, number | null | undefined>;
  created_at: CreatedAt;
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  email: string;
  name: string | null;
  created_at: CreatedAt;
}

export interface ApiTokensTable {
  id: Generated<number>;
  user_id: number;
  token_sha256: Buffer;
  token_hint: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
  last_used_at: ColumnType<Date | null, never, Date>;
}
