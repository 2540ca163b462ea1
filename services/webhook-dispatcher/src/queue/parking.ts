/**
 * Moving webhooks from the stream path into the database queue, in batches, one batch at a time
 * and in the order asked (so a delivery's events enter its queue in order):
 * - `failed`: its first attempt failed; queued with that attempt recorded (retry time, or dead
 *   letter, endpoint health), like any queued message's failure;
 * - `park`: queued as it is (the events after a failed one, or one that waited too long);
 * - `check`: queued only if its (endpoint, delivery) queue still holds pending messages; if not,
 *   every earlier event of the delivery has been delivered or dead-lettered for that endpoint,
 *   and it may go straight from the stream.
 * A queued webhook's message row is committed before the answer, so its stream message may be
 * acknowledged.
 */
import { type Batcher, createBatcher } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import { type FailedAttempt, type RecordedAttempt, recordFailures } from "../worker/attempts.repository.ts";
import type { SentAttempt } from "../worker/sender.ts";
import { retryUntilStopped } from "../worker/write-retries.ts";
import {
  busyQueues,
  lockQueues,
  type QueueRef,
  queueKey,
  queueMessages,
  type StoredEvent,
  settleQueues,
  storeEvents,
} from "./queue.repository.ts";

export type ParkRequest = {
  event: StoredEvent;
  endpointId: string;
  partition: number;
} & ({ kind: "check" | "park" } | { kind: "failed"; sent: SentAttempt });

export interface ParkOutcome {
  /** In the database queue now (false only for a `check` whose queue was empty). */
  queued: boolean;
  /** The failed attempt as recorded (`failed` only). */
  recorded?: RecordedAttempt;
}

const MAX_BATCH = 200;

export function createParking(options: {
  db: Kysely<DB>;
  logger: Logger;
  disableAfterMs: number;
}): Batcher<ParkRequest, ParkOutcome> {
  return createBatcher({
    maxBatch: MAX_BATCH,
    // An account whose many webhooks all move at once does not hold another's failure back.
    ownerOf: (request) => request.event.account_id,
    onFailure: retryUntilStopped(options.logger, "webhooks into the queue"),
    handle: (requests) => options.db.transaction().execute((tx) => park(tx, requests, options.disableAfterMs)),
  });
}

async function park(tx: Kysely<DB>, requests: ParkRequest[], disableAfterMs: number): Promise<ParkOutcome[]> {
  const queueOf = (r: ParkRequest): QueueRef => ({ endpoint_id: r.endpointId, delivery_id: r.event.delivery_id });
  await lockQueues(tx, requests.map(queueOf));
  const busy = await busyQueues(tx, requests.filter((r) => r.kind === "check").map(queueOf));
  // A queue that takes a message in this batch is busy for the checks after it.
  const queued = requests.map((r) => {
    const key = queueKey(queueOf(r));
    if (r.kind !== "check" || busy.has(key)) busy.add(key);
    return busy.has(key);
  });
  const parked = requests.filter((_, i) => queued[i]);
  await storeEvents(tx, [...new Map(parked.map((r) => [r.event.id, r.event])).values()]);
  const ids = await queueMessages(
    tx,
    parked.map((r) => ({
      endpoint_id: r.endpointId,
      event_id: r.event.id,
      delivery_id: r.event.delivery_id,
      sequence: r.event.sequence,
      partition: r.partition,
    })),
  );
  const failures: FailedAttempt[] = [];
  parked.forEach((r, i) => {
    if (r.kind !== "failed") return;
    failures.push({
      messageId: ids[i] as number,
      leaseToken: null,
      endpointId: r.endpointId,
      eventId: r.event.id,
      eventType: r.event.type,
      deliveryId: r.event.delivery_id,
      sequence: r.event.sequence,
      attempt: 1,
      sent: r.sent,
    });
  });
  const recorded = await recordFailures(tx, failures, disableAfterMs);
  await settleQueues(tx, parked.map(queueOf));
  const recordedOf = new Map(failures.map((f, i) => [f.messageId, recorded[i]]));
  let next = 0;
  return requests.map((r, i) => {
    if (!queued[i]) return { queued: false };
    const id = ids[next++] as number;
    return r.kind === "failed" ? { queued: true, recorded: recordedOf.get(id) } : { queued: true };
  });
}
