/**
 * The delivery worker: claims due queue heads (leased, so several replicas share the work and a
 * crashed one's messages are taken over when the lease ends), signs each at send time, POSTs it,
 * and records the attempt.
 *
 * The database work goes in cycles: one cycle records the attempts finished since the last and,
 * in the same round trip, leases as many due heads as there are free slots (WEBHOOKS_CONCURRENCY
 * in this process, WEBHOOKS_ENDPOINT_CONCURRENCY leases per endpoint over every replica). The
 * attempts that finish while the cycles run are recorded together by the next (group commit),
 * so the cost per webhook falls as the load rises. A finished POST, new intake or a replay starts
 * a cycle at once; otherwise due retries are looked for every poll interval. Failed attempts,
 * rare, are recorded in a transaction of their own before the cycle's round trip.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import type { WebhookClient } from "../delivery-http/webhook-client.ts";
import type { DispatcherMetrics } from "../metrics.ts";
import { type ClaimedMessage, type DeliveredAttempt, finishAndClaim } from "../queue/queue.repository.ts";
import type { SecretBox } from "../signing/secret-box.ts";
import { signedHeaders } from "../signing/signing.ts";
import { type AttemptInput, type RecordedAttempt, recordFailures } from "./attempts.repository.ts";
import { decideAfterAttempt, type RetryPolicy } from "./retry-policy.ts";

const MAX_BATCH = 256;
/**
 * Longest wait of a finished attempt for the POSTs still in flight, so that one cycle records
 * them together (and refills all their slots) instead of one cycle each.
 */
const GATHER_MS = 5;
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

export interface Worker {
  start(): void;
  /** Makes the loop look for due messages now. */
  wake(): void;
  /** Stops claiming and waits for the POSTs in flight to be recorded. */
  stop(): Promise<void>;
}

export function createWorker(options: WorkerOptions): Worker {
  const { db, logger, metrics } = options;
  // Long enough for the POST and its recording; a lease outliving a crash is taken over after it.
  const leaseMs = 2 * options.timeoutMs + 1000;
  /** Attempts finished and not yet recorded; their messages are still leased. */
  const finished: AttemptInput[] = [];
  let posting = 0;
  /** Slots promised to the claims of the cycles running. */
  let reserved = 0;
  let cycling = false;
  /** When the oldest unrecorded attempt finished, and the timer that starts its cycle. */
  let gatherSince = 0;
  let gatherTimer: NodeJS.Timeout | undefined;
  let running = false;
  let woken = false;
  let poller: NodeJS.Timeout | undefined;
  let stopped: (() => void) | undefined;

  const free = () => (running ? Math.max(0, options.concurrency - posting - finished.length - reserved) : 0);
  const wake = () => {
    woken = true;
    kick();
  };

  /** Starts a cycle when there is work for it and none is running. */
  function kick() {
    if (cycling) return;
    if (finished.length > 0 && posting > 0 && performance.now() - gatherSince < GATHER_MS) {
      if (!gatherTimer) {
        gatherTimer = setTimeout(() => {
          gatherTimer = undefined;
          kick();
        }, GATHER_MS);
      }
    } else if (finished.length > 0 || (woken && free() > 0)) {
      woken = false;
      cycling = true;
      void cycle().finally(() => {
        cycling = false;
        kick();
      });
    } else if (!running && posting === 0) {
      stopped?.();
    }
  }

  /** Records a batch of finished attempts and fills the free slots. */
  async function cycle(): Promise<void> {
    const batch = finished.splice(0, MAX_BATCH);
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
      .map(({ message, token, attemptedAt, result }) => ({
        message,
        token,
        attemptedAt,
        durationMs: result.durationMs,
        statusCode: result.statusCode as number,
      }));
    const limit = free();
    if (delivered.length === 0 && limit === 0) return;
    const token = randomUUID();
    reserved += limit;
    const claimed = await withRetries(delivered.length, () =>
      finishAndClaim(db, delivered, { limit, perEndpoint: options.endpointConcurrency, leaseMs, token }),
    ).finally(() => {
      reserved -= limit;
    });
    if (!claimed) return;
    for (const attempt of delivered) metrics.observeAttempt("delivered", attempt.durationMs);
    for (const message of claimed) send(message, token);
    // Every free slot filled: more may be due at once, as soon as a slot frees.
    if (limit > 0 && claimed.length === limit) woken = true;
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

  function send(message: ClaimedMessage, token: string) {
    posting++;
    deliver(message, token)
      .then((input) => {
        if (finished.length === 0) gatherSince = performance.now();
        finished.push(input);
      })
      .catch((error) => logger.error({ err: error, message_id: message.id }, "webhook delivery failed"))
      .finally(() => {
        posting--;
        kick();
      });
  }

  async function deliver(message: ClaimedMessage, token: string): Promise<AttemptInput> {
    const attemptedAt = new Date();
    const secrets = [options.box.open(message.secret_ciphertext)];
    if (
      message.previous_secret_ciphertext &&
      message.previous_secret_expires_at &&
      message.previous_secret_expires_at > attemptedAt
    ) {
      secrets.push(options.box.open(message.previous_secret_ciphertext));
    }
    const headers = signedHeaders(secrets, message.event_id, message.body, attemptedAt);
    const result = await options.client.post(message.url, headers, message.body);
    const decision = decideAfterAttempt(options.retry, message.attempts + 1, result);
    return { message, token, attemptedAt, result, decision };
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
