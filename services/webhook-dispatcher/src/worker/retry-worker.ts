/**
 * The retry worker: sends the database queue's due heads of the partitions this replica owns
 * (retries, the events queued behind them, webhooks that waited too long in memory, replays),
 * through the same send gate as the stream path, and records each attempt: delivered (the next
 * message of its queue becomes due at once), or failed (next attempt on the schedule, dead
 * letter, endpoint health). It claims when woken (a queue moved into the database, an attempt
 * recorded, a replay) and every WEBHOOKS_POLL_INTERVAL_MS for retries coming due.
 *
 * Claims are fair between accounts: an account holds at most its share of the gate
 * (WEBHOOKS_ACCOUNT_CONCURRENCY) of the messages claimed here, and the accounts' due heads are
 * taken in turns (claimDue). So an account with thousands of due retries to endpoints that hang
 * leaves the rest of `maxInFlight` to the others, whose first due head is claimed at the next
 * claim.
 */
import { createBatcher } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import type { DispatcherMetrics } from "../metrics.ts";
import { type ClaimedMessage, claimDue, clearLeases } from "../queue/queue.repository.ts";
import {
  type AttemptedEvent,
  type DeliveredAttempt,
  type FailedAttempt,
  type RecordedAttempt,
  recordFailures,
  recordQueuedDelivered,
} from "./attempts.repository.ts";
import type { QueuedSend, SendGate } from "./send-gate.ts";
import type { Send } from "./sender.ts";
import { retryUntilStopped } from "./write-retries.ts";

/** A claim marks its messages as taken for this long; a new owner of the partition clears it. */
const LEASE_MS = 10 * 60 * 1000;
const RECORD_BATCH = 200;

type Record = { accountId: number } & (
  | { delivered: { message: ClaimedMessage; attempt: DeliveredAttempt } }
  | { failed: FailedAttempt }
);

export interface RetryWorker {
  start(): void;
  /** Makes it look for due messages now. */
  wake(): void;
  /** The partition is this replica's now: what its previous owner had claimed is free again. */
  acquire(partition: number): Promise<void>;
  /** Stops sending the partition's messages; resolves once its attempts in flight are recorded. */
  release(partition: number): Promise<void>;
  stop(): Promise<void>;
}

export function createRetryWorker(options: {
  db: Kysely<DB>;
  gate: SendGate;
  send: Send;
  metrics: DispatcherMetrics;
  logger: Logger;
  /** The partitions this replica owns now. */
  owned(): number[];
  pollIntervalMs: number;
  disableAfterMs: number;
  /** Messages claimed and not yet recorded, at most. */
  maxInFlight: number;
  /** Messages of one account claimed and not yet recorded, at most (its share of the gate). */
  maxInFlightPerAccount: number;
}): RetryWorker {
  const { db, logger, metrics } = options;
  /** Claimed and not recorded yet, by message id, with their place in the gate while they wait. */
  const inFlight = new Map<number, { message: ClaimedMessage; queued: QueuedSend | undefined; started: boolean }>();
  const releasing = new Set<number>();
  const idleWaiters = new Map<number, Array<() => void>>();
  let claiming: Promise<void> | undefined;
  let woken = false;
  let poller: NodeJS.Timeout | undefined;
  let running = false;

  const records = createBatcher<Record, RecordedAttempt | undefined>({
    maxBatch: RECORD_BATCH,
    ownerOf: (record) => record.accountId,
    onFailure: retryUntilStopped(logger, "webhook retries"),
    handle: (batch) =>
      db.transaction().execute(async (tx) => {
        const delivered = batch.flatMap((r) => ("delivered" in r ? [r.delivered] : []));
        const failed = batch.flatMap((r) => ("failed" in r ? [r.failed] : []));
        await recordQueuedDelivered(tx, delivered);
        const recorded = await recordFailures(tx, failed, options.disableAfterMs);
        let next = 0;
        return batch.map((r) => ("failed" in r ? recorded[next++] : undefined));
      }),
  });

  function finished(message: ClaimedMessage) {
    inFlight.delete(message.id);
    const partitionDone = ![...inFlight.values()].some((f) => f.message.partition === message.partition);
    if (partitionDone) {
      for (const resolve of idleWaiters.get(message.partition) ?? []) resolve();
      idleWaiters.delete(message.partition);
    }
    wake();
  }

  async function attempt(message: ClaimedMessage) {
    const sent = await options.send({
      endpointId: message.endpoint_id,
      url: message.url,
      secretCiphertext: message.secret_ciphertext,
      previousSecretCiphertext: message.previous_secret_ciphertext,
      previousSecretExpiresAt: message.previous_secret_expires_at,
      eventId: message.event_id,
      body: message.body,
      attempt: message.attempts + 1,
      traceparent: message.traceparent,
    });
    const { durationMs, statusCode } = sent.result;
    const tried: AttemptedEvent & { messageId: number; attempt: number } = {
      messageId: message.id,
      endpointId: message.endpoint_id,
      eventId: message.event_id,
      eventType: message.event_type,
      deliveryId: message.delivery_id,
      sequence: message.sequence,
      attempt: message.attempts + 1,
    };
    try {
      if (sent.decision.outcome === "delivered") {
        const attempt = { ...tried, attemptedAt: sent.attemptedAt, durationMs, statusCode: statusCode as number };
        await records.add({ accountId: message.account_id, delivered: { message, attempt } });
        metrics.observeAttempt("delivered", durationMs);
      } else {
        const recorded = await records.add({
          accountId: message.account_id,
          failed: { ...tried, leaseToken: message.lease_token, sent },
        });
        if (recorded) metrics.observeFailure(recorded, durationMs, message.endpoint_id, logger);
      }
    } catch {
      // Stopped before it could be recorded: the message is sent again by the partition's next owner.
    } finally {
      finished(message);
    }
  }

  async function claim() {
    const partitions = options.owned().filter((p) => !releasing.has(p));
    const room = options.maxInFlight - inFlight.size;
    if (!running || partitions.length === 0 || room <= 0) return;
    const busy = new Map<number, number>();
    for (const { message } of inFlight.values()) busy.set(message.account_id, (busy.get(message.account_id) ?? 0) + 1);
    const claimed = await claimDue(db, {
      partitions,
      limit: room,
      accountLimit: options.maxInFlightPerAccount,
      busy,
      sending: [...inFlight.keys()],
      leaseMs: LEASE_MS,
    });
    for (const message of claimed) {
      const entry = { message, queued: undefined as QueuedSend | undefined, started: false };
      inFlight.set(message.id, entry);
      const queued = options.gate.enqueue({ accountId: message.account_id, endpointId: message.endpoint_id }, () => {
        entry.started = true;
        return attempt(message);
      });
      // The gate may have started it already, when a slot was free.
      if (!entry.started) entry.queued = queued;
    }
    // A full claim: more may be due.
    if (claimed.length === room) woken = true;
  }

  function wake() {
    woken = true;
    if (claiming || !running) return;
    claiming = (async () => {
      while (woken && running) {
        woken = false;
        try {
          await claim();
        } catch (error) {
          logger.warn({ err: error }, "cannot claim due webhooks; retrying at the next poll");
        }
      }
    })().finally(() => {
      claiming = undefined;
    });
  }

  return {
    start() {
      if (running) return;
      running = true;
      poller = setInterval(wake, options.pollIntervalMs);
      wake();
    },
    wake,
    async acquire(partition) {
      await clearLeases(db, partition);
      wake();
    },
    async release(partition) {
      releasing.add(partition);
      await claiming;
      for (const [id, entry] of inFlight) {
        if (entry.message.partition !== partition || !entry.queued?.cancel()) continue;
        inFlight.delete(id);
      }
      if ([...inFlight.values()].some((f) => f.message.partition === partition)) {
        await new Promise<void>((resolve) =>
          idleWaiters.set(partition, [...(idleWaiters.get(partition) ?? []), resolve]),
        );
      }
      releasing.delete(partition);
    },
    async stop() {
      running = false;
      clearInterval(poller);
      await claiming;
      await records.drain();
      records.stop();
    },
  };
}
