/**
 * Latest vehicle positions from geo-ingest: a durable JetStream pull consumer
 * (`consumers.deliveryApiPositions`) on VEHICLE_POSITIONS, shared by the replicas. geo-ingest
 * publishes one per vehicle in an active round every second, so a fleet of thousands sends
 * thousands a second: messages are gathered into batches (group commit, the kit's batcher) and
 * each batch is stored in a few queries whatever its size (positions.service.ts
 * recordTrackerPositions); a message is acknowledged once its batch is stored, and redelivered
 * after a failure. A position of a round that is no longer active, or of another vehicle, is
 * dropped.
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
/**
 * Messages delivered and not yet acknowledged at most: what the batches draw from, and all that
 * waits in memory (a few hundred bytes each).
 */
const MAX_ACK_PENDING = 2000;

export function createPositionsConsumer(options: {
  nc: NatsConnection;
  namespace: string;
  positions: PositionsService;
  logger: Logger;
}) {
  const names = natsNames(options.namespace);
  const { logger } = options;
  const batcher = createBatcher<TrackerPosition, void>({
    maxBatch: BATCH_MAX,
    async handle(batch) {
      await options.positions.recordTrackerPositions(batch);
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
    const position = checked.value;
    batcher
      .add({
        roundId: position.round_id,
        vehicleExternalId: position.vehicle_external_id,
        latitude: position.latitude,
        longitude: position.longitude,
        recordedAt,
      })
      .then(
        () => msg.ack(),
        () => msg.nak(RETRY_MS),
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
