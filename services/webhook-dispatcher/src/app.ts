/**
 * Builds webhook-dispatcher from its dependencies; never listens (main.ts does, tests use inject).
 * HTTP serves only health and metrics; the work is background: the endpoint registry on NATS,
 * the intake consumer of DELIVERY_EVENTS, the delivery worker, and the periodic gauges and pruning.
 */
import { SERVICE_NAMES } from "@dos/contracts";
import { type BuiltService, createHttpApp, type ServiceDeps } from "@dos/service-kit";
import type { Service } from "@nats-io/services";
import type { Kysely } from "kysely";
import { type Config, parseRetrySchedule } from "./config.ts";
import type { DB } from "./db/database.ts";
import { createAddressPolicy } from "./delivery-http/address-policy.ts";
import { createWebhookClient } from "./delivery-http/webhook-client.ts";
import { startEndpointsBus } from "./endpoints/endpoints.bus.ts";
import { createEndpointsService } from "./endpoints/endpoints.service.ts";
import { createIntakeConsumer } from "./intake/intake.consumer.ts";
import { createDispatcherMetrics } from "./metrics.ts";
import { queueStats } from "./queue/queue.repository.ts";
import { pruneExpired } from "./queue/retention.ts";
import { createSecretBox } from "./signing/secret-box.ts";
import { createWorker } from "./worker/worker.ts";

const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export async function buildApp(deps: ServiceDeps<Config>): Promise<BuiltService> {
  const { config, logger } = deps;
  const db = deps.database.db as Kysely<DB>;
  const { app, metrics } = createHttpApp({
    service: SERVICE_NAMES.webhookDispatcher,
    logger,
    lifecycle: deps.lifecycle,
    checks: { postgres: deps.database.check, nats: deps.nats.check },
  });
  const dispatcherMetrics = createDispatcherMetrics(metrics);
  const policy = createAddressPolicy(config.WEBHOOKS_ALLOWED_HOSTS);
  const box = createSecretBox(config.WEBHOOKS_SECRET_KEY);
  const client = createWebhookClient({ policy, timeoutMs: config.WEBHOOKS_TIMEOUT_MS });
  const worker = createWorker({
    db,
    client,
    box,
    logger,
    metrics: dispatcherMetrics,
    retry: {
      scheduleMs: parseRetrySchedule(config.WEBHOOKS_RETRY_SCHEDULE),
      jitter: config.WEBHOOKS_RETRY_JITTER,
      retryAfterMaxMs: config.WEBHOOKS_RETRY_AFTER_MAX_MS,
    },
    concurrency: config.WEBHOOKS_CONCURRENCY,
    endpointConcurrency: config.WEBHOOKS_ENDPOINT_CONCURRENCY,
    pollIntervalMs: config.WEBHOOKS_POLL_INTERVAL_MS,
    timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
    disableAfterMs: config.WEBHOOKS_DISABLE_AFTER_MS,
  });
  const intake = createIntakeConsumer({
    nc: deps.nats.nc,
    namespace: config.NATS_NAMESPACE,
    db,
    logger,
    metrics: dispatcherMetrics,
    intake: { orderGraceMs: config.WEBHOOKS_ORDER_GRACE_MS },
    worker,
  });
  const endpoints = createEndpointsService({ db, config, policy, box, wake: worker.wake });

  let bus: Service | undefined;
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

  return {
    app,
    async start() {
      bus = await startEndpointsBus({ nc: deps.nats.nc, namespace: config.NATS_NAMESPACE, service: endpoints, logger });
      await intake.start();
      worker.start();
      timers.push(setInterval(measure, config.WEBHOOKS_STATS_INTERVAL_MS).unref());
      timers.push(setInterval(prune, PRUNE_INTERVAL_MS).unref());
      void measure();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      await bus?.stop().catch(() => {});
      await intake.stop();
      await worker.stop();
      await client.close();
    },
  };
}
