/**
 * A vehicle's stored positions on NATS (request/reply, services framework): delivery-api asks for
 * the operator's vehicle page, which lists recent positions. geo-ingest owns the positions, so
 * the question comes here rather than to its tables. Replies are VehicleTrackReply; a refusal is
 * an error reply whose code is the HTTP status to answer and whose body is an ErrorBody.
 */
import {
  formatTimestamp,
  natsNames,
  parseTimestamp,
  SERVICE_NAMES,
  type VehicleTrackReply,
  VehicleTrackRequest,
} from "@dos/contracts";
import { HttpError, type Logger, type NatsService, startJsonService } from "@dos/service-kit";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Kysely } from "kysely";
import { listVehicleTrack } from "../positions/positions.repository.ts";
import type { DB } from "../positions/positions.table.ts";

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
}): Promise<NatsService> {
  const names = natsNames(options.namespace).services.geoTrack;
  const { service, endpoint } = await startJsonService({
    nc: options.nc,
    name: names.name,
    version: "1.0.0",
    description: "Stored vehicle positions of geo-ingest",
    queue: names.queueGroup,
    logger: options.logger,
    tracer: SERVICE_NAMES.geoIngest,
    unavailable: "positions are unavailable, retry later",
  });
  endpoint<VehicleTrackRequest>(
    "vehicle",
    names.subjects.vehicle,
    (request) => vehicleTrack(options.db, request),
    VehicleTrackRequest,
  );
  return service;
}
