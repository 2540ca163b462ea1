/** A signed-in session: its cookie's hash, its expiries, whose it is, and the token it calls with. */
import type { ColumnType, Generated } from "kysely";

/** A shop user's session (client API token) or a staff person's (staff token, operator API). */
export type SessionKind = "shop" | "staff";

export interface SessionsTable {
  id: Generated<number>;
  token_sha256: Buffer;
  kind: SessionKind;
  /** The shop user's (kind shop), else null. */
  user_id: number | null;
  /** delivery-api's staff id (kind staff), else null. */
  staff_id: number | null;
  created_at: ColumnType<Date, never, never>;
  last_seen_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Date;
  ended_at: Date | null;
  api_token_id: number;
  api_token_sealed: Buffer;
}
