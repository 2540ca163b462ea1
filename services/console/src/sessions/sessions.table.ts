/** A signed-in session: its cookie's hash, its expiries, and the API token it calls with. */
import type { ColumnType, Generated } from "kysely";

export interface SessionsTable {
  id: Generated<number>;
  token_sha256: Buffer;
  user_id: number;
  created_at: ColumnType<Date, never, never>;
  last_seen_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Date;
  ended_at: Date | null;
  api_token_id: number;
  api_token_sealed: Buffer;
}
