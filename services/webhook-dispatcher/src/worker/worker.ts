/**
 * The delivery worker: claims due queue heads (leased, so several replicas share the work and a
 * crashed one's messages are taken over when the lease ends), signs each at send time, POSTs it,
 * and records the attempt. Up to WEBHOOKS_CONCURRENCY POSTs run at once; a finished POST or new
 * intake wakes the loop, otherwise it looks for due retries every poll interval.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import type { WebhookClient } from "../delivery-http/webhook-client.ts";
import type { DispatcherMetrics } from "../metrics.ts";
import { type ClaimedMessage, claimDueMessages } from "../queue/queue.repository.ts";
import type { SecretBox } from "../signing/secret-box.ts";
import { signedHeaders } from "../signing/signing.ts";
import { createAttemptRecorder } from "./attempt-recorder.ts";
import { decideAfterAttempt, type RetryPolicy } from "./retry-policy.ts";

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
  const inFlight = new Set<Promise<void>>();
  const recorder = createAttemptRecorder({ db, logger, disableAfterMs: options.disableAfterMs });
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) return resolve();
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function run() {
    while (running) {
      woken = false;
      const free = options.concurrency - inFlight.size;
      const token = randomUUID();
      let claimed: ClaimedMessage[] = [];
      if (free > 0) {
        try {
          claimed = await claimDueMessages(db, {
            limit: free,
            perEndpoint: options.endpointConcurrency,
            leaseMs,
            token,
          });
        } catch (error) {
          logger.warn({ err: error }, "cannot claim webhook messages; retrying");
          await sleep(Math.max(options.pollIntervalMs, 1000));
          continue;
        }
      }
      for (const message of claimed) {
        const task = deliver(message, token)
          .catch((error) => logger.error({ err: error, message_id: message.id }, "webhook delivery failed"))
          .finally(() => {
            inFlight.delete(task);
            wake();
          });
        inFlight.add(task);
      }
      if (claimed.length > 0 && claimed.length === free) continue;
      await sleep(options.pollIntervalMs);
    }
  }

  async function deliver(message: ClaimedMessage, token: string) {
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
    const recorded = await recorder.record({ message, token, attemptedAt, result, decision });
    if (!recorded) return;
    metrics.observeAttempt(recorded.outcome, result.durationMs);
    if (recorded.outcome === "dead_lettered") metrics.deadLetters.inc({ reason: "attempts" }, 1);
    if (recorded.alsoDeadLettered > 0)
      metrics.deadLetters.inc({ reason: "endpoint_disabled" }, recorded.alsoDeadLettered);
    if (recorded.disabledReason) {
      metrics.endpointsDisabled.inc();
      logger.warn({ endpoint_id: message.endpoint_id, reason: recorded.disabledReason }, "webhook endpoint disabled");
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    wake,
    async stop() {
      running = false;
      wake();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
