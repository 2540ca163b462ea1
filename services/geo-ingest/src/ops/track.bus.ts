/**
 * A vehicle's stored positions on NATS (request/reply, services framework): delivery-api asks for
 * the operator's vehicle page, which lists recent positions. geo-ingest owns the positions, so
 * the question comes here rather than to its tables. Replies are VehicleTrackReply; a refusal is
 * an error reply whose code is the HTTP status to answer and whose body is an ErrorBody.
 */
import {
  compileValidator,
  formatTimestamp,
  natsNames,
  parseTimestamp,
  type VehicleTrackReply,
  VehicleTrackRequest,
} from "@dos/contracts";
import { HttpError, isDependencyDown, type Logger, validationMessages } from "@dos/service-kit";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Service, type ServiceMsg, Svcm } from "@nats-io/services";
import type { Kysely } from "kysely";
import { listVehicleTrack } from "../positions/positions.repository.ts";
import type { DB } from "../positions/positions.table.ts";

const validate = compileValidator<VehicleTrackRequest>(VehicleTrackRequest);

/** The positions asked for, newest first. */
async function vehicleTrack(db: Kysely<DB>, request: VehicleTrackRequest): Promise<VehicleTrackReply> {
  const bound = (label: string, text: string | null | undefined) => {
    if (text === undefined || text === null) return undefined;
    const date = parseTimestamp(text);
    if (!date) throw new HttpError(422, `${label} is not a real date`);
    return date;
  };
  const since = bound("since", request.since);
  const before = bound("before", request.before);
  const rows = await listVehicleTrack(db, request.vehicle_external_id, { since, before, limit: request.limit });
  return {
    positions: rows.map((row) => ({
      latitude: row.latitude,
      longitude: row.longitude,
      recorded_at: formatTimestamp(row.recorded_at),
      received_at: formatTimestamp(row.received_at),
      round_id: row.round_id,
      provider: row.provider,
      tracker_id: row.tracker_id,
    })),
  };
}

export async function startTrackBus(options: {
  nc: NatsConnection;
  namespace: string;
  db: Kysely<DB>;
  logger: Logger;
}): Promise<Service> {
  const names = natsNames(options.namespace).services.geoTrack;
  const { logger, db } = options;
  // @nats-io/services ships its own copy of nats-core's types; the connection is the same object.
  const svc = await new Svcm(options.nc as unknown as ConstructorParameters<typeof Svcm>[0]).add({
    name: names.name,
    version: "1.0.0",
    description: "Stored vehicle positions of geo-ingest",
    queue: names.queueGroup,
  });
  svc.addEndpoint("vehicle", {
    subject: names.subjects.vehicle,
    handler: (_error, msg) => void answer(msg, db, logger),
  });
  return svc;
}

async function answer(msg: ServiceMsg, db: Kysely<DB>, logger: Logger): Promise<void> {
  try {
    let parsed: unknown;
    try {
      parsed = msg.json();
    } catch {
      throw new HttpError(400, "body is not valid JSON");
    }
    const checked = validate(parsed);
    if (!checked.ok) throw new HttpError(422, validationMessages(checked.errors));
    msg.respond(JSON.stringify(await vehicleTrack(db, checked.value)));
  } catch (error) {
    if (error instanceof HttpError) {
      msg.respondError(error.statusCode, error.messages.join("; "), JSON.stringify({ errors: error.messages }));
    } else if (isDependencyDown(error)) {
      logger.warn({ err: error, subject: msg.subject }, "vehicle track refused: PostgreSQL unavailable");
      msg.respondError(
        503,
        "service is temporarily unavailable",
        JSON.stringify({ errors: ["positions are unavailable, retry later"] }),
      );
    } else {
      logger.error({ err: error, subject: msg.subject }, "vehicle track failed");
      msg.respondError(500, "internal error", JSON.stringify({ errors: ["internal error"] }));
    }
  }
}
