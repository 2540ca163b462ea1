import type { ColumnType, Generated } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface EndpointsTable {
  id: Generated<string>;
  account_id: number;
  url: string;
  event_types: string[] | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  status: ColumnType<"enabled" | "disabled", "enabled" | "disabled" | undefined>;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  created_at: Timestamp;
  deleted_at: Date | null;
}
