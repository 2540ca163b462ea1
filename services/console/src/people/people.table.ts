/** Tables of the people who sign in: users, one-time links and failed sign-ins. */
import type { ColumnType, Generated } from "kysely";

export interface UsersTable {
  id: Generated<number>;
  api_user_id: number;
  account_id: number;
  email: string;
  password_hash: string | null;
  password_changed_at: Date | null;
  created_at: ColumnType<Date, never, never>;
}

export type LinkPurpose = "invitation" | "password_reset";

export interface OneTimeLinksTable {
  id: Generated<number>;
  user_id: number;
  purpose: LinkPurpose;
  token_sha256: Buffer;
  expires_at: Date;
  used_at: Date | null;
  created_at: ColumnType<Date, never, never>;
}

export interface SignInFailuresTable {
  key: string;
  failed_at: ColumnType<Date, Date | undefined, never>;
}
