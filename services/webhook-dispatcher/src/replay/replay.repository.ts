/**
 * Queues past events again for one endpoint (a replay): a message already delivered or
 * dead-lettered becomes pending with a fresh retry count; one still pending is left as it is;
 * an event sent straight from the stream (no message yet) gets one. Each queue takes them in
 * sequence order behind what it holds.
 */
import { deliveryEventPartition } from "@dos/contracts";
import type { Db } from "../db/database.ts";
import type { EndpointRow } from "../endpoints/endpoints.repository.ts";
import { lockQueues, queueMessages, type StoredEvent, settleQueues, storeEvents } from "../queue/queue.repository.ts";

export async function requeueEvents(tx: Db, endpoint: EndpointRow, events: StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  const queues = events.map((e) => ({ endpoint_id: endpoint.id, delivery_id: e.delivery_id }));
  await lockQueues(tx, queues);
  await storeEvents(tx, events);
  const partition = deliveryEventPartition(endpoint.account_id);
  await queueMessages(
    tx,
    events.map((e) => ({
      endpoint_id: endpoint.id,
      event_id: e.id,
      delivery_id: e.delivery_id,
      sequence: e.sequence,
      partition,
    })),
    { again: true },
  );
  await settleQueues(tx, queues);
}
