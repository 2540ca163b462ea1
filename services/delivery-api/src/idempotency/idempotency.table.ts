import type { ColumnType, JSONColumnType } from "kysely";

export interface IdempotencyKeysTable {
  account_id: number;
  operation: string;
  key: string;
  request_sha256: Buffer;
  response_status: number;
  response_body: JSONColumnType<object, string, string>;
  // Updated when an expired key is used again.
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
}
