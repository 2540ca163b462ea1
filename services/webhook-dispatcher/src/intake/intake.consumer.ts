/**
 * Intake: the delivery events of the partitions this replica owns, taken from their consumers
 * (partition-consumer.ts) and handed to the stream path (worker/live-queues.ts) a batch at a
 * time: each batch is checked, routed to its endpoints in one database round trip
 * (intake.repository.ts) and its webhooks queued in stream order. An event's stream message is
 * acknowledged once each of its webhooks is delivered and logged or committed to the database
 * queue; an event with no endpoint to go to, or already handled for all of them, at once. A
 * malformed event is terminated and logged. An event seen again while still in hand (a consumer
 * recreated from its floor) joins the first copy and is acknowledged with it.
 */
import { SERVICE_NAMES } from "@dos/contracts";
import {
  contextFromNatsHeaders,
  createBatcher,
  type Pool,
  retry,
  type Span,
  SpanKind,
  SpanStatusCode,
  startSpan,
  traceparentHeader,
  traceparentOf,
  tracingEnabled,
} from "@dos/service-kit";
import type { JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import type { DispatcherMetrics } from "../metrics.ts";
import type { StoredEvent } from "../queue/queue.repository.ts";
import type { LiveQueues } from "../worker/live-queues.ts";
import { retryUntilStopped } from "../worker/write-retries.ts";
import { readDeliveryEvent, storedEvent } from "./delivery-event.ts";
import { type RoutedEndpoint, routeEvents } from "./intake.repository.ts";
import { createPartitionConsumer, type PartitionConsumer } from "./partition-consumer.ts";

const MAX_BATCH = 500;
/**
 * How long a batch that could take more events waits for them before it is routed: a routing
 * costs a round trip and a statement whatever the batch's size, and events published together
 * (delivery-api publishes a group commit's first events in one write) still arrive one message
 * at a time, within a few milliseconds. Each webhook waits this much more, once.
 */
const ROUTE_LINGER_MS = 5;
/**
 * ...but only when company is likely: an event arriving after this long without a routing goes
 * at once (a trickle of lone events gains nothing by waiting). At a steady rate events come in
 * such groups every few tens of milliseconds, and each group is then one routing, not several.
 */
const ROUTE_QUIET_MS = 50;
const ROUTE_RETRY_MS = 1000;

export interface Intake {
  /** Starts consuming the partition (its consumer recreated from its floor). */
  acquire(partition: number): Promise<void>;
  /** Stops consuming it; resolves once its webhooks in flight are handled. */
  release(partition: number): Promise<void>;
  /** Events of the partitions owned not yet taken in, and taken in but not acknowledged. */
  lag(): Promise<{ pending: number; ackPending: number }>;
}

/** An event in hand: its stream message(s), until all its webhooks are handled. */
interface Entry {
  event: StoredEvent;
  partition: number;
  msgs: JsMsg[];
  /** Webhooks not handled yet. */
  remaining: number;
  span: Span | undefined;
}

export function createIntake(options: {
  nc: NatsConnection;
  namespace: string;
  db: Kysely<DB>;
  /** The pool the routing statement runs on, prepared (intake.repository.ts). */
  pool: Pool;
  logger: Logger;
  metrics: DispatcherMetrics;
  live: LiveQueues;
}): Intake {
  const { logger, metrics } = options;
  const consumers = new Map<number, PartitionConsumer>();
  const entries = new Map<string, Entry>();
  const batches = createBatcher<{ msg: JsMsg; partition: number }, void>({
    maxBatch: MAX_BATCH,
    lingerMs: ROUTE_LINGER_MS,
    quietMs: ROUTE_QUIET_MS,
    // handle() catches its own failures (below): the policy is the dispatcher's, never used.
    onFailure: retryUntilStopped(logger, "delivery events"),
    handle: async (batch) => {
      try {
        await handleBatch(batch);
      } catch (error) {
        // Never handled twice: its events come back when their consumer is recreated.
        logger.error({ err: error }, "delivery event batch failed; its events come back when their consumer restarts");
      }
      return batch.map(() => undefined);
    },
  });

  function receive(msg: JsMsg, partition: number) {
    void batches.add({ msg, partition });
  }

  function finish(entry: Entry) {
    for (const msg of entry.msgs) msg.ack();
    if (entries.get(entry.event.id) === entry) entries.delete(entry.event.id);
    entry.span?.end();
  }

  /** The span of one event's intake, a child of the publish span in its headers; none when not traced. */
  function intakeSpan(msg: JsMsg): Span | undefined {
    if (!tracingEnabled()) return undefined;
    return startSpan(SERVICE_NAMES.webhookDispatcher, "delivery-events intake", {
      kind: SpanKind.CONSUMER,
      parent: contextFromNatsHeaders(msg.headers),
      attributes: { "messaging.system": "nats", "messaging.destination.name": msg.subject },
    });
  }

  async function handleBatch(batch: Array<{ msg: JsMsg; partition: number }>) {
    const fresh: Entry[] = [];
    for (const { msg, partition } of batch) {
      if (!consumers.has(partition)) continue; // released: the next owner takes it
      const read = readDeliveryEvent(msg, partition);
      if (!read.ok) {
        // It can never succeed; keeping it would only have it redelivered forever.
        logger.error(
          { subject: msg.subject, seq: msg.seq, problems: read.problems },
          "malformed delivery event dropped",
        );
        metrics.eventsReceived.inc({ result: "malformed" });
        msg.term("malformed delivery event");
        continue;
      }
      const seen = entries.get(read.event.id);
      if (seen) {
        seen.msgs.push(msg);
        continue;
      }
      const span = intakeSpan(msg);
      const entry: Entry = {
        // The intake span's context is kept: each POST of the event is its child.
        event: storedEvent(read.event, read.body, span ? traceparentOf(span) : traceparentHeader(msg.headers)),
        partition,
        msgs: [msg],
        remaining: 0,
        span,
      };
      entries.set(read.event.id, entry);
      fresh.push(entry);
    }
    if (fresh.length === 0) return;

    const routedAt = performance.now();
    const routes = await routeWithRetries(fresh);
    if (!routes) return;
    const byEvent = Map.groupBy(routes, (route) => route.event_id);
    for (const entry of fresh) {
      if (!consumers.has(entry.partition) || entries.get(entry.event.id) !== entry) continue;
      const targets = (byEvent.get(entry.event.id) ?? []).filter((route) => !route.handled);
      entry.remaining = targets.length;
      if (targets.length === 0) finish(entry);
      for (const endpoint of targets) {
        options.live.add(
          {
            event: entry.event,
            endpoint,
            partition: entry.partition,
            handled: () => {
              if (--entry.remaining === 0) finish(entry);
            },
          },
          { queued: endpoint.queued, routedAt },
        );
      }
    }
    metrics.eventsReceived.inc({ result: "recorded" }, fresh.length);
  }

  /** Routes the batch, waiting out a database outage; null when its partitions were all released meanwhile. */
  function routeWithRetries(fresh: Entry[]): Promise<RoutedEndpoint[] | null> {
    return retry(
      async (attempt) => {
        if (attempt > 1 && !fresh.some((entry) => consumers.has(entry.partition))) return null;
        return await routeEvents(
          options.db,
          options.pool,
          fresh.map((entry) => entry.event),
        );
      },
      {
        backoff: { firstMs: ROUTE_RETRY_MS },
        onRetry(error) {
          logger.warn({ err: error, events: fresh.length }, "cannot route delivery events; retrying");
          metrics.eventsReceived.inc({ result: "failed" }, fresh.length);
          fresh.forEach((entry) => {
            entry.span?.setStatus({ code: SpanStatusCode.ERROR });
          });
        },
      },
    );
  }

  return {
    async acquire(partition) {
      const consumer = createPartitionConsumer({
        nc: options.nc,
        namespace: options.namespace,
        partition,
        logger,
        onMessage: (msg) => receive(msg, partition),
      });
      consumers.set(partition, consumer);
      try {
        await consumer.start();
      } catch (error) {
        consumers.delete(partition);
        throw error;
      }
    },
    async release(partition) {
      const consumer = consumers.get(partition);
      consumers.delete(partition);
      // Its messages still in a batch are skipped there: the partition is no longer consumed.
      await consumer?.stop();
      for (const [id, entry] of entries) {
        if (entry.partition !== partition) continue;
        entries.delete(id);
        entry.span?.end();
      }
      await options.live.release(partition);
    },
    async lag() {
      let pending = 0;
      let ackPending = 0;
      for (const consumer of consumers.values()) {
        const lag = await consumer.lag();
        pending += lag.pending;
        ackPending += lag.ackPending;
      }
      return { pending, ackPending };
    },
  };
}
