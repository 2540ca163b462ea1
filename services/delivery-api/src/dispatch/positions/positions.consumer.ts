/**
 * Latest vehicle positions from geo-ingest: a durable JetStream pull consumer
 * (`consumers.deliveryApiPositions`) on VEHICLE_POSITIONS, shared by the replicas. geo-ingest
 * publishes one per vehicle in an active round every second, so a fleet of thousands sends
 * thousands a second: messages are gathered into batches (group commit, the kit's batcher) and
 * each batch is stored in a few queries whatever its size (positions.service.ts
 * recordTrackerPositions); a message is acknowledged once its batch is stored, and redelivered
 * after a failure. A position of a round that is no longer active, or of another vehicle, is
 * dropped.
 *
 * Only a vehicle's latest position matters, so what waits for a batch is one entry per vehicle,
 * holding its newest message: a newer one takes its place and the one it replaces is acknowledged
 * at once (superseded: the stream itself keeps only the newest per vehicle), an older one is
 * acknowledged at once, a redelivery of the same one takes its place. What waits in memory is
 * thus one message per vehicle however slow the database is. With one entry per message, the
 * fleet soak's delivery-api ran out of heap: while a starved database held a batch back, the
 * server went on delivering each vehicle's next position (a superseded message leaves the
 * server's unacknowledged count, so max_ack_pending does not bound what the client holds).
 */
import { compileValidator, jsonBody, natsNames, parseTimestamp, VehiclePosition } from "@dos/contracts";
import { createBatcher, createDurableConsumer } from "@dos/service-kit";
import { AckPolicy, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { type NatsConnection, nanos } from "@nats-io/nats-core";
import type { Logger } from "pino";
import type { PositionsService, TrackerPosition } from "./positions.service.ts";

const validate = compileValidator<VehiclePosition>(VehiclePosition);
const RETRY_MS = 1000;
/** Positions stored per batch at most. */
const BATCH_MAX = 500;
/** Messages delivered and not yet acknowledged at most (the server stops delivering beyond). */
const MAX_ACK_PENDING = 2000;

/** A vehicle's newest position waiting for a batch, and its message. */
interface Waiting {
  position: TrackerPosition;
  msg: JsMsg;
}

export function createPositionsConsumer(options: {
  nc: NatsConnection;
  namespace: string;
  positions: PositionsService;
  logger: Logger;
}) {
  const names = natsNames(options.namespace);
  const { logger } = options;
  /** By vehicle External ID; an entry leaves when its batch starts, so later messages wait anew. */
  const waiting = new Map<string, Waiting>();
  const batcher = createBatcher<Waiting, void>({
    maxBatch: BATCH_MAX,
    async handle(batch) {
      for (const entry of batch) waiting.delete(entry.position.vehicleExternalId);
      await options.positions.recordTrackerPositions(batch.map((entry) => entry.position));
      return new Array(batch.length);
    },
    onFailure: { policy: "reject" },
    onRejected: (error, items) =>
      logger.warn({ err: error, positions: items }, "cannot store vehicle positions; they will be redelivered"),
  });

  function handle(msg: JsMsg) {
    const checked = validate(jsonBody(msg));
    const recordedAt = checked.ok ? parseTimestamp(checked.value.recorded_at) : null;
    if (!checked.ok || !recordedAt) {
      logger.warn({ subject: msg.subject }, "malformed vehicle position dropped");
      msg.term("malformed");
      return;
    }
    const position: TrackerPosition = {
      roundId: checked.value.round_id,
      vehicleExternalId: checked.value.vehicle_external_id,
      latitude: checked.value.latitude,
      longitude: checked.value.longitude,
      recordedAt,
    };
    const entry = waiting.get(position.vehicleExternalId);
    if (entry) {
      if (msg.seq === entry.msg.seq) entry.msg = msg;
      else if (position.recordedAt > entry.position.recordedAt) {
        entry.msg.ack();
        entry.position = position;
        entry.msg = msg;
      } else msg.ack();
      return;
    }
    const added: Waiting = { position, msg };
    waiting.set(position.vehicleExternalId, added);
    batcher.add(added).then(
      () => added.msg.ack(),
      () => added.msg.nak(RETRY_MS),
    );
  }

  return createDurableConsumer({
    nc: options.nc,
    stream: names.streams.vehiclePositions,
    config: {
      durable_name: names.consumers.deliveryApiPositions,
      ack_policy: AckPolicy.Explicit,
      // Only the latest position matters; older ones are superseded anyway.
      deliver_policy: DeliverPolicy.LastPerSubject,
      filter_subject: names.subjects.vehiclePositionsAll,
      ack_wait: nanos(30_000),
      max_ack_pending: MAX_ACK_PENDING,
      max_deliver: -1,
      description: "delivery-api: latest positions for tracking and ETA",
    },
    logger,
    label: "vehicle position",
    retryMs: RETRY_MS,
    maxMessages: BATCH_MAX,
    async drain(messages) {
      // Messages are not awaited one by one: they gather in the batcher while a batch is stored.
      for await (const msg of messages) handle(msg);
      await batcher.drain();
    },
  });
}
