import type { ColumnType, Generated } from "kysely";

/** A JSON value (the resource before or after a change), written as its JSON text. */
type JsonValue = ColumnType<unknown, string | null | undefined, string | null>;

export interface AuditLogTable {
  id: Generated<number>;
  at: ColumnType<Date, never, never>;
  actor_kind: "automation" | "staff";
  actor_id: number | null;
  actor_name: string;
  method: string;
  route: string;
  resource_type: string;
  resource_id: string | null;
  /** Null until the answer is recorded. */
  status_code: ColumnType<number | null, number | null | undefined, number>;
  before: JsonValue;
  after: JsonValue;
  request_id: string;
}
