/**
 * Queues past events again for one endpoint (a replay): a message already delivered or
 * dead-lettered becomes pending with a fresh retry count; one still pending is left as it is;
 * an event sent straight from the stream (no message yet) gets one. Each queue takes them in
 * sequence order behind what it holds.
 */
import { deliveryEventPartition } from "@dos/contracts";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { EndpointRow } from "../endpoints/endpoints.repository.ts";
import { lockQueues, type StoredEvent, settleQueues, storeEvents } from "../queue/queue.repository.ts";

export async function requeueEvents(tx: Db, endpoint: EndpointRow, events: StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  const queues = events.map((e) => ({ endpoint_id: endpoint.id, delivery_id: e.delivery_id }));
  await lockQueues(tx, queues);
  await storeEvents(tx, events);
  await sql`
    insert into messages (endpoint_id, event_id, delivery_id, sequence, partition)
    select ${endpoint.id}::uuid, x.id, x.delivery_id, x.sequence, ${deliveryEventPartition(endpoint.account_id)}
    from unnest(${events.map((e) => e.id)}::uuid[], ${events.map((e) => e.delivery_id)}::bigint[],
      ${events.map((e) => e.sequence)}::int[]) as x(id, delivery_id, sequence)
    on conflict (endpoint_id, event_id) do update
      set state = 'pending', attempts = 0, next_attempt_at = null, lease_until = null, lease_token = null,
          dead_reason = null, finished_at = null, not_before = now()
      where messages.state <> 'pending'
  `.execute(tx);
  await settleQueues(tx, queues);
}
