/**
 * Queue intake: a durable JetStream pull consumer on DELIVERY_EVENTS, shared by every replica.
 * Each event is recorded (with one message per matching endpoint) and only then acknowledged;
 * a database failure naks it for redelivery, a malformed event is terminated. The consume()
 * call runs inside an outer loop that re-creates it after any failure.
 */
import { compileValidator, DeliveryEvent as DeliveryEventSchema, natsNames, SERVICE_NAMES } from "@dos/contracts";
import {
  contextFromNatsHeaders,
  createDurableConsumer,
  type Span,
  SpanKind,
  SpanStatusCode,
  startSpan,
  traceparentHeader,
  traceparentOf,
  tracingEnabled,
} from "@dos/service-kit";
import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg, jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, nanos } from "@nats-io/nats-core";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import type { DispatcherMetrics } from "../metrics.ts";
import type { Worker } from "../worker/worker.ts";
import { type IncomingEvent, type IntakeOptions, recordEvents } from "./intake.repository.ts";

/**
 * What intake checks of an event: the envelope it stores and routes by, with a timestamp
 * PostgreSQL will take (a bad one would fail the whole batch, again and again). The payload goes
 * to receivers byte for byte; delivery-api's outbox tests check it against the full contract
 * where it is produced. Checking the whole Delivery here again cost about 15 µs per event.
 */
const DeliveryEventEnvelope = Type.Composite([
  Type.Omit(DeliveryEventSchema, ["payload", "occurred_at"]),
  Type.Object({ occurred_at: Type.String({ format: "date-time" }), payload: Type.Object({}) }),
]);
type DeliveryEventEnvelope = Static<typeof DeliveryEventEnvelope>;
const validateEvent = compileValidator<DeliveryEventEnvelope>(DeliveryEventEnvelope);
/**
 * How long an event taken by a replica stays its own before JetStream hands it to another. A
 * replica that dies holding events unacknowledged delays them by this much, so the order grace
 * (WEBHOOKS_ORDER_GRACE_MS) must be longer: a successor then waits for its predecessor's
 * redelivery instead of overtaking it. A batch is recorded in one transaction, far below it.
 */
export const INTAKE_ACK_WAIT_MS = 10_000;
const RETRY_DELAY_MS = 1000;
const MAX_BATCH = 500;

export interface IntakeConsumer {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Events in the stream not yet taken in, and taken in but not acknowledged. */
  lag(): Promise<{ pending: number; ackPending: number }>;
}

export function createIntakeConsumer(options: {
  nc: NatsConnection;
  namespace: string;
  db: Kysely<DB>;
  logger: Logger;
  metrics: DispatcherMetrics;
  intake: IntakeOptions;
  /** The local worker: intake leases due heads for its free slots and hands them over. */
  worker: Pick<Worker, "reserve" | "adopt" | "wake">;
}): IntakeConsumer {
  const names = natsNames(options.namespace);
  const stream = names.streams.deliveryEvents;
  const durable = names.consumers.webhookDispatcher;
  const { logger, metrics } = options;

  /** Records a batch in one transaction, then acknowledges it; a malformed event is terminated. */
  async function handleBatch(batch: JsMsg[]) {
    const valid: Array<{ msg: JsMsg; span: Span | undefined } & IncomingEvent> = [];
    for (const msg of batch) {
      let parsed: unknown;
      try {
        parsed = msg.json();
      } catch {
        parsed = undefined;
      }
      const checked = validateEvent(parsed);
      if (checked.ok) {
        const span = intakeSpan(msg);
        // The intake span's context is stored: each POST of the event is its child.
        const traceparent = span ? traceparentOf(span) : traceparentHeader(msg.headers);
        valid.push({ msg, event: checked.value, body: msg.string(), traceparent, span });
        continue;
      }
      // It can never succeed; keeping it would only have it redelivered forever.
      logger.error(
        { subject: msg.subject, seq: msg.seq, errors: checked.errors.slice(0, 3) },
        "malformed delivery event dropped",
      );
      metrics.eventsReceived.inc({ result: "malformed" });
      msg.term("malformed delivery event");
    }
    if (valid.length === 0) return;
    const endSpans = (failed: boolean) => {
      for (const { span } of valid) {
        if (failed) span?.setStatus({ code: SpanStatusCode.ERROR });
        span?.end();
      }
    };
    const reservation = options.worker.reserve();
    try {
      const claimed = await recordEvents(options.db, valid, options.intake, reservation);
      options.worker.adopt(reservation, claimed);
      // Nothing leased here (no free slot, or another replica claiming the endpoint): what was
      // queued is the worker's to claim. Otherwise the worker's next cycle claims the rest.
      if (claimed.length === 0) options.worker.wake();
      for (const { msg } of valid) msg.ack();
      endSpans(false);
      metrics.eventsReceived.inc({ result: "recorded" }, valid.length);
    } catch (error) {
      options.worker.adopt(reservation, []);
      // Naked in arrival order, the events come back in that order once the database answers.
      logger.warn({ err: error, events: valid.length }, "cannot record delivery events; they will be redelivered");
      metrics.eventsReceived.inc({ result: "failed" }, valid.length);
      endSpans(true);
      for (const { msg } of valid) msg.nak(RETRY_DELAY_MS);
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS / 10));
    }
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

  /**
   * Takes messages as they arrive and records whatever has gathered while the previous batch
   * was being written: one event alone is written at once, a burst in a few transactions.
   */
  async function drainInBatches(messages: ConsumerMessages) {
    const waiting: JsMsg[] = [];
    let signal: (() => void) | undefined;
    let ended = false;
    let failure: unknown;
    const pump = (async () => {
      try {
        for await (const msg of messages) {
          waiting.push(msg);
          signal?.();
        }
      } catch (error) {
        failure = error;
      } finally {
        ended = true;
        signal?.();
      }
    })();
    while (waiting.length > 0 || !ended) {
      if (waiting.length === 0) {
        await new Promise<void>((resolve) => {
          signal = resolve;
        });
        signal = undefined;
        continue;
      }
      await handleBatch(waiting.splice(0, MAX_BATCH));
    }
    await pump;
    if (failure) throw failure;
  }

  const durableConsumer = createDurableConsumer({
    nc: options.nc,
    stream,
    config: {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: names.subjects.deliveryEventsAll,
      ack_wait: nanos(INTAKE_ACK_WAIT_MS),
      max_deliver: -1,
      max_ack_pending: 1000,
      description: "webhook-dispatcher: every delivery event, shared by the replicas",
    },
    logger,
    label: "delivery event",
    retryMs: RETRY_DELAY_MS,
    drain: drainInBatches,
  });

  return {
    async start() {
      await durableConsumer.ensure();
      durableConsumer.start();
    },
    stop: () => durableConsumer.stop(),
    async lag() {
      const jsm = await jetstreamManager(options.nc);
      const info = await jsm.consumers.info(stream, durable);
      return { pending: info.num_pending, ackPending: info.num_ack_pending };
    },
  };
}
