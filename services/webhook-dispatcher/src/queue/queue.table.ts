import type { ColumnType, Generated } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface EventsTable {
  id: string;
  account_id: number;
  delivery_id: number;
  sequence: number;
  type: string;
  body: string;
  occurred_at: Timestamp;
  received_at: Timestamp;
  /** W3C trace context of the intake span (or as published, when not traced here); the POST continues it. */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
}

export type MessageState = "pending" | "delivered" | "dead";

export interface MessagesTable {
  id: Generated<number>;
  endpoint_id: string;
  event_id: string;
  delivery_id: number;
  sequence: number;
  /** The partition of the endpoint's account: only its owner claims the message. */
  partition: number;
  /** The endpoint's account: claims take turns between accounts. */
  account_id: number;
  state: ColumnType<MessageState, MessageState | undefined>;
  attempts: ColumnType<number, number | undefined>;
  not_before: Timestamp;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  lease_token: string | null;
  dead_reason: string | null;
  created_at: Timestamp;
  finished_at: Date | null;
}

export type AttemptOutcome = "delivered" | "retrying" | "dead_lettered";

export interface AttemptsTable {
  id: Generated<number>;
  /** The queued message tried; null for a webhook sent straight from the stream. */
  message_id: number | null;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  delivery_id: number;
  sequence: number;
  attempt: number;
  attempted_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  next_attempt_at: Date | null;
}
