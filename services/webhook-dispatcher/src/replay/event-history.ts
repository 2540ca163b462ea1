/**
 * An account's past delivery events, read back from DELIVERY_EVENTS (which keeps them
 * DELIVERY_EVENTS_RETENTION_DAYS): the source of a replay. An ordered consumer filtered on the
 * account's subjects starts at the time asked, a minute early (an event is published a moment
 * after it occurred, so the stream's clock runs a little behind `occurred_at`), and reads up to
 * the stream's end as it was when the read began.
 */
import { natsNames } from "@dos/contracts";
import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type DeliveryEventEnvelope, readDeliveryEvent } from "../intake/delivery-event.ts";

const EARLY_MS = 60_000;
const PULL_BATCH = 500;

export interface PastEvent {
  event: DeliveryEventEnvelope;
  /** The exact bytes published. */
  body: string;
}

/** The account's well-formed events that occurred at `since` or later, in stream order. */
export async function* accountEventsSince(
  nc: NatsConnection,
  namespace: string,
  accountId: number,
  since: Date,
): AsyncGenerator<PastEvent> {
  const names = natsNames(namespace);
  const consumer = await jetstream(nc).consumers.get(names.streams.deliveryEvents, {
    filter_subjects: names.subjects.deliveryEventsOfAccount(accountId),
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(since.getTime() - EARLY_MS).toISOString(),
  });
  if ((await consumer.info()).num_pending === 0) return;
  const messages = await consumer.consume({ max_messages: PULL_BATCH });
  try {
    for await (const msg of messages) {
      const read = readDeliveryEvent(msg);
      if (read.ok && Date.parse(read.event.occurred_at) >= since.getTime())
        yield { event: read.event, body: read.body };
      if (msg.info.pending === 0) break;
    }
  } finally {
    messages.stop();
  }
}
