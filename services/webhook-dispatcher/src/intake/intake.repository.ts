/**
 * Intake of delivery events, a batch at a time: each event is stored once, and one message per
 * matching enabled endpoint of its account is queued, all in one transaction (idempotent on the
 * event id, so a redelivered event queues nothing twice). Set-based statements keep the cost per
 * batch, not per event.
 */
import type { DeliveryEvent } from "@dos/contracts";
import { type Kysely, sql } from "kysely";
import type { DB } from "../db/database.ts";
import type { ClaimedMessage, ClaimOptions } from "../queue/queue.repository.ts";

export interface IntakeOptions {
  /** How long a message waits for its delivery's previous event when that one has not arrived. */
  orderGraceMs: number;
}

export interface IncomingEvent {
  /** The envelope's fields; the payload is only in `body`. */
  event: Pick<DeliveryEvent, "id" | "account_id" | "delivery_id" | "sequence" | "type" | "occurred_at">;
  /** The exact bytes published: the body every attempt POSTs and signs. */
  body: string;
  /** The trace context its POSTs continue; null when it came untraced. */
  traceparent: string | null;
}

/**
 * Records the events and queues their messages (`take_in`, migration 0005), then leases due
 * heads of the batch's endpoints for the slots given (`take_in_and_claim`, migration 0006), in
 * one round trip; returns the messages leased, for this process to send at once. Commits with
 * the full durability guarantee: the commit lets the events be acknowledged to JetStream.
 */
export async function recordEvents(
  db: Kysely<DB>,
  incoming: IncomingEvent[],
  options: IntakeOptions,
  claim: ClaimOptions,
): Promise<ClaimedMessage[]> {
  if (incoming.length === 0) return [];
  const column = <T>(pick: (i: IncomingEvent) => T) => incoming.map(pick);
  const { rows } = await sql<ClaimedMessage>`
    select * from take_in_and_claim(
      ${column((i) => i.event.id)}::uuid[], ${column((i) => i.event.account_id)}::bigint[],
      ${column((i) => i.event.delivery_id)}::bigint[], ${column((i) => i.event.sequence)}::int[],
      ${column((i) => i.event.type)}::text[], ${column((i) => i.body)}::text[], ${column((i) => i.traceparent)}::text[],
      ${column((i) => i.event.occurred_at)}::timestamptz[], ${options.orderGraceMs}::float8,
      ${claim.slots}::int, ${claim.perEndpoint}::int, ${claim.perSlot}::int, ${claim.leaseMs}::float8,
      ${claim.stepMs}::float8)
  `.execute(db);
  return rows;
}
