/** Tracking-link SMS, sent from this outbox (migration 0001_baseline). */
import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "../../db/columns.ts";

export type SmsStatus = "pending" | "sent" | "suppressed" | "failed";

export interface SmsMessagesTable {
  id: Generated<number>;
  task_id: number;
  recipient: string;
  sender: string;
  body: string;
  status: ColumnType<SmsStatus, SmsStatus | undefined>;
  attempts: ColumnType<number, number | undefined>;
  last_error: string | null;
  next_attempt_at: ColumnType<Date, Date | string | undefined>;
  sent_at: Date | null;
  created_at: CreatedAt;
}
