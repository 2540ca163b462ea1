/**
 * The durable consumer of one partition of DELIVERY_EVENTS, run by the partition's owner only.
 *
 * Each time it starts (taking the partition over, or after the consume loop failed) the consumer
 * is created anew from its acknowledgement floor: every event not acknowledged yet comes back at
 * once and in stream order, whatever the previous owner (or the previous loop) held. Waiting for
 * JetStream's redelivery instead would let later events of a delivery overtake an earlier one
 * left unacknowledged. Events acknowledged out of order above the floor come back too; intake
 * finds them already handled (their attempts are logged) and only acknowledges them.
 */
import { natsNames } from "@dos/contracts";
import { createDurableConsumer } from "@dos/service-kit";
import { AckPolicy, type ConsumerConfig, DeliverPolicy, type JsMsg, jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, nanos } from "@nats-io/nats-core";
import type { Logger } from "pino";

/** Events handed to this process and not acknowledged yet, per partition, at most. */
const MAX_ACK_PENDING = 1000;
/**
 * A message is acknowledged once all its webhooks are delivered or queued, within a POST's
 * timeout (or the queue's wait) of its arrival. JetStream redelivers only after this long, and
 * the consumer is recreated from its floor anyway whenever its loop restarts.
 */
const ACK_WAIT_MS = 5 * 60 * 1000;
const PULL_BATCH = 256;
const RETRY_MS = 1000;

export interface PartitionConsumer {
  /** Creates the consumer from its floor, then consumes in the background. */
  start(): Promise<void>;
  /** Stops taking messages; resolves once the consume loop ended. */
  stop(): Promise<void>;
  /** Events not yet delivered to this process, and delivered but not acknowledged. */
  lag(): Promise<{ pending: number; ackPending: number }>;
}

export function createPartitionConsumer(options: {
  nc: NatsConnection;
  namespace: string;
  partition: number;
  logger: Logger;
  onMessage(msg: JsMsg): void;
}): PartitionConsumer {
  const { nc, partition, logger } = options;
  const names = natsNames(options.namespace);
  const stream = names.streams.deliveryEvents;
  const durable = names.consumers.webhookDispatcher(partition);

  /** Deletes the consumer and creates it again from its acknowledgement floor. */
  async function recreateFromFloor() {
    const jsm = await jetstreamManager(nc);
    const existing = await jsm.consumers.info(stream, durable).catch((error: { status?: number; code?: number }) => {
      if (error.status === 404 || error.code === 10014 || /not found/i.test(String(error))) return null;
      throw error;
    });
    let start: Partial<ConsumerConfig> = { deliver_policy: DeliverPolicy.All };
    if (existing) {
      // The floor is 0 while nothing was acknowledged: then the consumer's own start stands.
      const floor = existing.ack_floor.stream_seq;
      const configured = existing.config.opt_start_seq;
      if (floor > 0) start = { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: floor + 1 };
      else if (configured) start = { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: configured };
      await jsm.consumers.delete(stream, durable);
    }
    await jsm.consumers.add(stream, {
      durable_name: durable,
      description: `webhook-dispatcher: the delivery events of partition ${partition}, held by one replica at a time`,
      filter_subject: names.subjects.deliveryEventsOfPartition(partition),
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ACK_WAIT_MS),
      max_ack_pending: MAX_ACK_PENDING,
      max_deliver: -1,
      ...start,
    });
  }

  const consumer = createDurableConsumer({
    nc,
    stream,
    config: { durable_name: durable },
    logger: logger.child({ partition }),
    label: "delivery event",
    maxMessages: PULL_BATCH,
    retryMs: RETRY_MS,
    // start() has just created it; every restart creates it again from its floor.
    prepare: (restart) => (restart ? recreateFromFloor() : Promise.resolve()),
    async drain(messages) {
      for await (const msg of messages) options.onMessage(msg);
      throw new Error("the consumer's messages ended");
    },
  });

  return {
    async start() {
      await recreateFromFloor();
      consumer.start();
    },
    stop: () => consumer.stop(),
    async lag() {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.consumers.info(stream, durable);
      return { pending: info.num_pending, ackPending: info.num_ack_pending };
    },
  };
}
