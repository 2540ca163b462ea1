/**
 * Latest vehicle positions from geo-ingest: a durable JetStream pull consumer
 * (`consumers.deliveryApiPositions`) on VEHICLE_POSITIONS, shared by the replicas. Each message
 * is stored as its round's tracker position (and refreshes the ETA) before it is acknowledged;
 * a position of a round that is no longer active, or of another vehicle, is dropped.
 */
import { compileValidator, jsonBody, natsNames, parseTimestamp, VehiclePosition } from "@dos/contracts";
import { createDurableConsumer } from "@dos/service-kit";
import { AckPolicy, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { type NatsConnection, nanos } from "@nats-io/nats-core";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../../db/database.ts";
import { isActiveRoundOfVehicle } from "../rounds/rounds.repository.ts";
import type { PositionsService } from "./positions.service.ts";

const validate = compileValidator<VehiclePosition>(VehiclePosition);
const RETRY_MS = 1000;

export function createPositionsConsumer(options: {
  nc: NatsConnection;
  namespace: string;
  db: Kysely<DB>;
  positions: PositionsService;
  logger: Logger;
}) {
  const names = natsNames(options.namespace);
  const { logger, db } = options;

  async function handle(msg: JsMsg) {
    const checked = validate(jsonBody(msg));
    const recordedAt = checked.ok ? parseTimestamp(checked.value.recorded_at) : null;
    if (!checked.ok || !recordedAt) {
      logger.warn({ subject: msg.subject }, "malformed vehicle position dropped");
      msg.term("malformed");
      return;
    }
    const position = checked.value;
    try {
      if (await isActiveRoundOfVehicle(db, position.round_id, position.vehicle_external_id)) {
        await options.positions.record({
          roundId: position.round_id,
          source: "tracker",
          latitude: position.latitude,
          longitude: position.longitude,
          recordedAt,
        });
      }
      msg.ack();
    } catch (error) {
      logger.warn({ err: error }, "cannot store a vehicle position; it will be redelivered");
      msg.nak(RETRY_MS);
    }
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
      max_deliver: -1,
      description: "delivery-api: latest positions for tracking and ETA",
    },
    logger,
    label: "vehicle position",
    retryMs: RETRY_MS,
    async drain(messages) {
      for await (const msg of messages) await handle(msg);
    },
  });
}
