/**
 * Builds webhook-dispatcher from its dependencies; never listens (main.ts does, tests use inject).
 * HTTP serves only health and metrics; the work is background: the endpoint registry on NATS,
 * the partitions of DELIVERY_EVENTS this replica owns (their intake and stream path), the retry
 * worker of the database queue, and the periodic gauges and pruning.
 */
import { natsNames, SERVICE_NAMES } from "@dos/contracts";
import { type BuiltService, createBatcher, createHttpApp, type NatsService, type ServiceDeps } from "@dos/service-kit";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Kysely } from "kysely";
import { type Config, parseRetrySchedule } from "./config.ts";
import type { DB } from "./db/database.ts";
import { createAddressPolicy } from "./delivery-http/address-policy.ts";
import { createWebhookClient } from "./delivery-http/webhook-client.ts";
import { startEndpointsBus } from "./endpoints/endpoints.bus.ts";
import { createEndpointsService } from "./endpoints/endpoints.service.ts";
import { createIntake } from "./intake/intake.consumer.ts";
import { createDispatcherMetrics } from "./metrics.ts";
import { createPartitionOwnership } from "./partitions/partition-ownership.ts";
import { createParking } from "./queue/parking.ts";
import { queueStats } from "./queue/queue.repository.ts";
import { pruneExpired } from "./queue/retention.ts";
import { accountEventsSince } from "./replay/event-history.ts";
import { createSecretBox } from "./signing/secret-box.ts";
import { type DeliveredAttempt, logDelivered } from "./worker/attempts.repository.ts";
import { createLiveQueues } from "./worker/live-queues.ts";
import { createRetryWorker } from "./worker/retry-worker.ts";
import { createSendGate } from "./worker/send-gate.ts";
import { createSender } from "./worker/sender.ts";
import { retryUntilStopped } from "./worker/write-retries.ts";

const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const ATTEMPT_LOG_BATCH = 1000;
/** Delivered attempts only delay their acknowledgements while they wait to be logged together. */
const ATTEMPT_LOG_LINGER_MS = 10;

export async function buildApp(deps: ServiceDeps<Config>): Promise<BuiltService> {
  const { config, logger } = deps;
  const db = deps.database.db as Kysely<DB>;
  const nc = deps.nats.nc;
  const { app, metrics } = createHttpApp({
    service: SERVICE_NAMES.webhookDispatcher,
    logger,
    lifecycle: deps.lifecycle,
    timeouts: deps.config,
    trustedProxies: deps.config.TRUSTED_PROXIES,
    checks: { nats: deps.nats.check },
    database: deps.database,
  });
  const dispatcherMetrics = createDispatcherMetrics(metrics);
  const policy = createAddressPolicy(config.WEBHOOKS_ALLOWED_HOSTS);
  const box = createSecretBox(config.WEBHOOKS_SECRET_KEY);
  const client = createWebhookClient({ policy, timeoutMs: config.WEBHOOKS_TIMEOUT_MS });
  const send = createSender({
    client,
    box,
    retry: {
      scheduleMs: parseRetrySchedule(config.WEBHOOKS_RETRY_SCHEDULE),
      jitter: config.WEBHOOKS_RETRY_JITTER,
      retryAfterMaxMs: config.WEBHOOKS_RETRY_AFTER_MAX_MS,
    },
  });
  const gate = createSendGate({
    processLimit: config.WEBHOOKS_CONCURRENCY,
    accountLimit: config.WEBHOOKS_ACCOUNT_CONCURRENCY,
    endpointLimit: config.WEBHOOKS_ENDPOINT_CONCURRENCY,
  });
  const attemptLog = createBatcher<DeliveredAttempt, void>({
    maxBatch: ATTEMPT_LOG_BATCH,
    lingerMs: ATTEMPT_LOG_LINGER_MS,
    onFailure: retryUntilStopped(logger, "delivered webhook attempts"),
    handle: async (attempts) => {
      await logDelivered(db, attempts);
      return attempts.map(() => undefined);
    },
  });
  const parking = createParking({ db, logger, disableAfterMs: config.WEBHOOKS_DISABLE_AFTER_MS });

  const retryWorker = createRetryWorker({
    db,
    gate,
    send,
    metrics: dispatcherMetrics,
    logger,
    // The partitions this replica owns (ownership is created below; asked only once started).
    owned: () => ownership.owned(),
    pollIntervalMs: config.WEBHOOKS_POLL_INTERVAL_MS,
    disableAfterMs: config.WEBHOOKS_DISABLE_AFTER_MS,
    maxInFlight: config.WEBHOOKS_CONCURRENCY,
    maxInFlightPerAccount: config.WEBHOOKS_ACCOUNT_CONCURRENCY,
  });
  const live = createLiveQueues({
    gate,
    send,
    attemptLog,
    parking,
    metrics: dispatcherMetrics,
    logger,
    maxWaitMs: config.WEBHOOKS_MEMORY_WAIT_MS,
    onQueued: retryWorker.wake,
  });
  const intake = createIntake({
    nc,
    namespace: config.NATS_NAMESPACE,
    db,
    pool: deps.database.pool,
    logger,
    metrics: dispatcherMetrics,
    live,
  });
  const ownership = createPartitionOwnership({
    pool: deps.database.pool,
    namespace: config.NATS_NAMESPACE,
    intervalMs: config.WEBHOOKS_REBALANCE_INTERVAL_MS,
    logger,
    async onAcquire(partition) {
      await retryWorker.acquire(partition);
      await intake.acquire(partition);
    },
    async onRelease(partition) {
      await Promise.all([intake.release(partition), retryWorker.release(partition)]);
    },
    onChange: (owned) => dispatcherMetrics.partitionsOwned.set(owned),
  });
  const endpoints = createEndpointsService({
    db,
    config,
    policy,
    box,
    history: (accountId, since) => accountEventsSince(nc, config.NATS_NAMESPACE, accountId, since),
    wake: retryWorker.wake,
  });

  let bus: NatsService | undefined;
  const timers: NodeJS.Timeout[] = [];
  let stopped = false;

  async function measure() {
    try {
      const stats = await queueStats(db);
      dispatcherMetrics.queueDepth.set(stats.depth);
      dispatcherMetrics.oldestPendingAge.set(stats.oldestPendingAgeSeconds);
      const lag = await intake.lag();
      dispatcherMetrics.consumerPending.set(lag.pending);
      dispatcherMetrics.consumerAckPending.set(lag.ackPending);
    } catch (error) {
      logger.debug({ err: error }, "cannot measure the webhook queue");
    }
  }

  async function prune() {
    try {
      const removed = await pruneExpired(db, config.WEBHOOKS_RETENTION_DAYS);
      if (removed > 0) logger.info({ removed }, "expired webhook events and attempts pruned");
    } catch (error) {
      logger.warn({ err: error }, "cannot prune expired webhook rows");
    }
  }

  /** Before partitions, one consumer took every event; left alone it would only pile up. */
  async function deleteUnpartitionedConsumer() {
    const names = natsNames(config.NATS_NAMESPACE);
    const jsm = await jetstreamManager(nc);
    const removed = await jsm.consumers
      .delete(names.streams.deliveryEvents, names.consumers.webhookDispatcherUnpartitioned)
      .catch(() => false);
    if (removed) logger.info("the unpartitioned delivery event consumer was deleted");
  }

  return {
    app,
    async start() {
      bus = await startEndpointsBus({ nc, namespace: config.NATS_NAMESPACE, service: endpoints, logger });
      await deleteUnpartitionedConsumer();
      retryWorker.start();
      await ownership.start();
      timers.push(setInterval(measure, config.WEBHOOKS_STATS_INTERVAL_MS).unref());
      timers.push(setInterval(prune, PRUNE_INTERVAL_MS).unref());
      void measure();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      await bus?.stop().catch(() => {});
      // Each partition is handed over cleanly: its POSTs in flight are recorded first.
      await ownership.stop();
      await retryWorker.stop();
      await attemptLog.drain();
      await parking.drain();
      attemptLog.stop();
      parking.stop();
      await client.close();
    },
  };
}
