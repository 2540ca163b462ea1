/**
 * The delivery worker: claims due queue heads (leased, so several replicas share the work and a
 * crashed one's messages are taken over when the lease ends), signs each at send time, POSTs it,
 * and records the attempt.
 *
 * Work goes in slots: a slot is one lease token over up to MESSAGES_PER_SLOT heads of one
 * endpoint (different queues), POSTed one after the other. An endpoint has at most
 * WEBHOOKS_ENDPOINT_CONCURRENCY slots over every replica, so never more POSTs in flight, and
 * this process at most WEBHOOKS_CONCURRENCY slots. The database work goes in cycles, one at a
 * time: a cycle records the attempts finished since the last and, in the same round trip,
 * leases heads for the free slots. Attempts that finish while a cycle runs are recorded together
 * by the next (group commit), so the cost per webhook falls as the load rises. A slot done, new
 * intake or a replay starts a cycle at once; otherwise due retries are looked for every poll
 * interval. A slot keeps its queues: recording a message delivered leases the next message of
 * its queue to the same slot, answered by the same round trip. Failed attempts, rare, are
 * recorded in a transaction of their own.
 */
import { tracingEnabled } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import type { WebhookClient } from "../delivery-http/webhook-client.ts";
import type { DispatcherMetrics } from "../metrics.ts";
import {
  type ClaimedMessage,
  type ClaimOptions,
  type DeliveredAttempt,
  finishAndClaim,
  releaseLeases,
} from "../queue/queue.repository.ts";
import type { SecretBox } from "../signing/secret-box.ts";
import { createKeyRing, signedHeaders } from "../signing/signing.ts";
import { type AttemptInput, eventTraceparents, type RecordedAttempt, recordFailures } from "./attempts.repository.ts";
import { decideAfterAttempt, type RetryPolicy } from "./retry-policy.ts";
import { tracedPost } from "./traced-post.ts";

const MAX_BATCH = 256;
/**
 * A slot is freed when all its attempts are recorded. Once one slot has finished sending, the
 * cycle that records it waits up to this long for the other slots still sending, so that one
 * round trip frees (and refills) them together.
 */
const GATHER_MS = 5;
/** Longest wait of a finished attempt for its recording while its slot is still sending. */
const RECORD_WAIT_MS = 100;
/**
 * Messages a slot may take (from different queues of one endpoint), POSTed one after the other:
 * a slot refills without waiting for the database, so an endpoint's throughput is no longer
 * WEBHOOKS_ENDPOINT_CONCURRENCY divided by a database round trip. Only an endpoint with more
 * due heads than free slots gets more than one per slot.
 */
const MESSAGES_PER_SLOT = 8;
const MAX_TRIES = 5;

export interface WorkerOptions {
  db: Kysely<DB>;
  client: WebhookClient;
  box: SecretBox;
  logger: Logger;
  metrics: DispatcherMetrics;
  retry: RetryPolicy;
  concurrency: number;
  endpointConcurrency: number;
  pollIntervalMs: number;
  timeoutMs: number;
  disableAfterMs: number;
}

/** Free slots set aside for a claim made outside the worker's cycles (by intake). */
export interface SlotReservation extends ClaimOptions {
  /** When the claim started: its leases are counted from then. */
  claimedAt: number;
}

export interface Worker {
  start(): void;
  /** Makes the loop look for due messages now. */
  wake(): void;
  /** Sets the free slots aside for a claim made elsewhere; none while stopping. */
  reserve(): SlotReservation;
  /** Sends the messages that a reservation's claim leased and frees the rest of its slots. */
  adopt(reservation: SlotReservation, claimed: ClaimedMessage[]): void;
  /** Stops claiming and waits for the POSTs in flight to be recorded. */
  stop(): Promise<void>;
}

export function createWorker(options: WorkerOptions): Worker {
  const { db, logger, metrics } = options;
  const keyOf = createKeyRing(options.box);
  // Long enough for the POST and its recording; a lease outliving a crash is taken over after it.
  const leaseMs = 2 * options.timeoutMs + 1000;
  /** Attempts finished and not yet recorded; their messages are still leased. */
  const finished: AttemptInput[] = [];
  /** Messages leased and left unsent (stopping, or a stalled slot); their leases are given back. */
  const unsent: ClaimedMessage[] = [];
  /** The lease tokens of the slots sending (one POST at a time each). */
  const sending = new Set<string>();
  /** Slots promised to the claim of the cycle running. */
  let reserved = 0;
  let cycling = false;
  /** Slots done sending whose attempts are not all recorded, and since when the first one is. */
  let slotsDone = 0;
  let slotsDoneSince = 0;
  /** When the oldest unrecorded attempt finished. */
  let finishedSince = 0;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let woken = false;
  let poller: NodeJS.Timeout | undefined;
  let stopped: (() => void) | undefined;

  const free = () => (running ? Math.max(0, options.concurrency - sending.size - reserved) : 0);
  const claimOptions = (slots: number): ClaimOptions => ({
    slots,
    perEndpoint: options.endpointConcurrency,
    perSlot: MESSAGES_PER_SLOT,
    leaseMs,
    stepMs: options.timeoutMs,
  });
  const wake = () => {
    woken = true;
    kick();
  };

  /**
   * Starts a cycle when one can free slots (every slot done sending, or the first done a little
   * while ago), when attempts waited long enough for their recording, or when woken with slots
   * free; otherwise sets a timer for the earliest of those moments.
   */
  function kick() {
    if (cycling) return;
    clearTimeout(timer);
    const now = performance.now();
    const gathered = slotsDone > 0 ? slotsDoneSince + (sending.size === 0 ? 0 : GATHER_MS) : Number.POSITIVE_INFINITY;
    const overdue = finished.length > 0 ? finishedSince + RECORD_WAIT_MS : Number.POSITIVE_INFINITY;
    if (now >= Math.min(gathered, overdue) || unsent.length > 0 || (woken && free() > 0)) {
      woken = false;
      cycling = true;
      void cycle().finally(() => {
        cycling = false;
        kick();
      });
    } else if (Math.min(gathered, overdue) < Number.POSITIVE_INFINITY) {
      timer = setTimeout(kick, Math.min(gathered, overdue) - now);
    } else if (!running && sending.size === 0 && reserved === 0) {
      stopped?.();
    }
  }

  /** Records a batch of finished attempts and fills the free slots. */
  async function cycle(): Promise<void> {
    const batch = finished.splice(0, MAX_BATCH);
    // What is left (a batch was full) goes in the next cycle at once.
    slotsDone = finished.length > 0 ? 1 : 0;
    finishedSince = slotsDoneSince = performance.now();
    const released = unsent.splice(0);
    if (released.length > 0) await withRetries(released.length, () => releaseLeases(db, released));
    const failed = batch.filter((input) => input.decision.outcome !== "delivered");
    if (failed.length > 0) {
      const recorded = await withRetries(failed.length, () =>
        db.transaction().execute((tx) => recordFailures(tx, failed, options.disableAfterMs)),
      );
      recorded?.forEach((result, i) => {
        report(failed[i] as AttemptInput, result);
      });
    }
    const delivered: DeliveredAttempt[] = batch
      .filter((input) => input.decision.outcome === "delivered")
      .map(({ message, attemptedAt, result }) => ({
        message,
        attemptedAt,
        durationMs: result.durationMs,
        statusCode: result.statusCode as number,
      }));
    const slots = free();
    if (delivered.length === 0 && slots === 0) return;
    // The slots that delivered keep their queues: the next message of each goes out in the same
    // slot (continue_queues, migration 0010), so those slots are not offered to new queues. Only
    // a slot done sending, with no attempt left for a later cycle, is continued: a slot never
    // sends two messages at once.
    const later = new Set(finished.map((input) => input.message.lease_token));
    const delivering = new Set(delivered.map((d) => d.message.lease_token));
    const continuing = new Set([...delivering].filter((token) => !sending.has(token) && !later.has(token)));
    const newSlots = Math.max(0, slots - continuing.size);
    reserved += slots;
    try {
      const claimedAt = performance.now();
      const claimed = await withRetries(delivered.length, () =>
        finishAndClaim(db, delivered, continuing, claimOptions(newSlots)),
      );
      if (!claimed) return;
      for (const attempt of delivered) metrics.observeAttempt("delivered", attempt.durationMs);
      const tokens = await openSlots(claimed, claimedAt);
      const opened = [...tokens].filter((token) => !continuing.has(token)).length;
      // A slot that delivered and goes on with no next message has freed its place at the
      // endpoint: the next cycle claims for it at once. Every offered slot filled: more may be due.
      const freed = [...delivering].some((token) => !tokens.has(token));
      if (freed || (newSlots > 0 && opened >= newSlots)) woken = true;
    } finally {
      // The slots opened count as sending by now.
      reserved -= slots;
    }
  }

  /** Starts sending each slot of a claim; returns the lease tokens of the slots it opened. */
  async function openSlots(claimed: ClaimedMessage[], claimedAt: number): Promise<Set<string>> {
    // Only when traced: one more read per claim for the events' stored trace contexts.
    const traces = tracingEnabled() && claimed.length > 0 ? await traceparentsOf(claimed) : undefined;
    const slots = Map.groupBy(claimed, (m) => m.lease_token);
    for (const messages of slots.values()) {
      void runSlot(
        messages.sort((a, b) => a.slot_position - b.slot_position),
        claimedAt,
        traces,
      );
    }
    return new Set(slots.keys());
  }

  /** Runs a database write, retried after a deadlock or an outage; null when it never succeeded. */
  async function withRetries<T>(attempts: number, write: () => Promise<T>): Promise<T | null> {
    for (let tries = 1; ; tries++) {
      try {
        return await write();
      } catch (error) {
        if (tries >= MAX_TRIES) {
          // Unrecorded attempts keep their leases until they end; their messages are then sent again.
          logger.error({ err: error, attempts }, "cannot record webhook attempts or claim messages");
          return null;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * tries));
      }
    }
  }

  /** The stored trace context of each claimed message's event; a failed read only loses the traces. */
  async function traceparentsOf(claimed: ClaimedMessage[]): Promise<Map<string, string>> {
    try {
      return await eventTraceparents(db, [...new Set(claimed.map((m) => m.event_id))]);
    } catch (error) {
      logger.warn({ err: error }, "cannot read the trace context of claimed webhooks");
      return new Map();
    }
  }

  /** POSTs a slot's messages one after the other. */
  async function runSlot(messages: ClaimedMessage[], claimedAt: number, traces?: Map<string, string>) {
    const token = messages[0]?.lease_token ?? "";
    sending.add(token);
    /** Queues whose message in this slot was not delivered: their later messages wait. */
    const halted = new Set<string>();
    const queueOf = (message: ClaimedMessage) => `${message.endpoint_id}/${message.delivery_id}`;
    try {
      for (const [i, message] of messages.entries()) {
        // The lease must outlast this POST with a second to spare for its recording; if it may
        // not (the process stalled), or the worker stops, the rest of the slot is given back.
        const leaseLeft = claimedAt + leaseMs + message.slot_position * options.timeoutMs - performance.now();
        if (!running || leaseLeft < leaseMs - options.timeoutMs) {
          unsent.push(...messages.slice(i));
          break;
        }
        // A slot may hold a run of one queue (continue_queues): an event is never sent before
        // the one before it in its delivery was delivered.
        if (halted.has(queueOf(message))) {
          unsent.push(message);
          continue;
        }
        try {
          const input = await deliver(message, traces?.get(message.event_id));
          if (input.decision.outcome !== "delivered") halted.add(queueOf(message));
          if (finished.length === 0) finishedSince = performance.now();
          finished.push(input);
        } catch (error) {
          halted.add(queueOf(message));
          logger.error({ err: error, message_id: message.id }, "webhook delivery failed");
        }
        kick();
      }
    } finally {
      sending.delete(token);
      if (slotsDone++ === 0) slotsDoneSince = performance.now();
      kick();
    }
  }

  async function deliver(message: ClaimedMessage, traceparent?: string): Promise<AttemptInput> {
    const attemptedAt = new Date();
    const keys = [keyOf(message.secret_ciphertext)];
    if (
      message.previous_secret_ciphertext &&
      message.previous_secret_expires_at &&
      message.previous_secret_expires_at > attemptedAt
    ) {
      keys.push(keyOf(message.previous_secret_ciphertext));
    }
    const headers = signedHeaders(keys, message.event_id, message.body, attemptedAt);
    const result = await tracedPost(options.client, message, headers, traceparent);
    const decision = decideAfterAttempt(options.retry, message.attempts + 1, result);
    return { message, attemptedAt, result, decision };
  }

  function report(input: AttemptInput, recorded: RecordedAttempt) {
    metrics.observeAttempt(recorded.outcome, input.result.durationMs);
    if (recorded.outcome === "dead_lettered") metrics.deadLetters.inc({ reason: "attempts" }, 1);
    if (recorded.alsoDeadLettered > 0)
      metrics.deadLetters.inc({ reason: "endpoint_disabled" }, recorded.alsoDeadLettered);
    if (recorded.disabledReason) {
      metrics.endpointsDisabled.inc();
      logger.warn(
        { endpoint_id: input.message.endpoint_id, reason: recorded.disabledReason },
        "webhook endpoint disabled",
      );
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      poller = setInterval(wake, options.pollIntervalMs);
      wake();
    },
    wake,
    reserve() {
      const slots = free();
      reserved += slots;
      return { ...claimOptions(slots), claimedAt: performance.now() };
    },
    adopt(reservation, claimed) {
      // The slots opened count as sending before the reservation is given back.
      void openSlots(claimed, reservation.claimedAt).finally(() => {
        reserved -= reservation.slots;
        kick();
      });
    },
    /** Stops claiming; resolves once the POSTs in flight are recorded. */
    async stop() {
      if (!running) return;
      running = false;
      clearInterval(poller);
      await new Promise<void>((resolve) => {
        stopped = resolve;
        kick();
      });
    },
  };
}
