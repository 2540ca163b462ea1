import type { DeliveryEvent } from "@dos/contracts";
import type { JSONColumnType } from "kysely";
import type { CreatedAt } from "../db/columns.ts";

export interface OutboxTable {
  id: string;
  account_id: number;
  delivery_id: number;
  sequence: number;
  type: string;
  subject: string;
  /** The event as the JSON text published (fields in the documented order). */
  event: string | null;
  /** The event as jsonb, no longer written (`event` replaced it); the relay falls back to it when `event` is null. */
  payload: JSONColumnType<DeliveryEvent, string | null, string | null> | null;
  occurred_at: CreatedAt;
  published_at: Date | null;
  /** W3C trace context of the change that wrote the event; the relay publishes it in the headers. */
  traceparent: string | null;
}
