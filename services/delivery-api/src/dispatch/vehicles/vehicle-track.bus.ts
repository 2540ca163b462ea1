/**
 * A vehicle's stored positions, asked of geo-ingest over NATS (request/reply,
 * `services.geoTrack.subjects.vehicle`): geo-ingest owns the positions its trackers send, and
 * delivery-api never reads its tables. No answer in time, no geo-ingest running or a reply off
 * the contract is a 503 with Retry-After; geo-ingest's refusals of the caller's values keep
 * their status (422).
 */
import {
  compileValidator,
  jsonBody,
  natsNames,
  SERVICE_ERROR_HEADERS,
  VehicleTrackReply,
  type VehicleTrackRequest,
} from "@dos/contracts";
import { HttpError, type Logger, unavailable } from "@dos/service-kit";
import type { Msg, NatsConnection } from "@nats-io/nats-core";

/** How long geo-ingest has to answer. */
const TRACK_TIMEOUT_MS = 5000;
/** Seconds a caller is told to wait when geo-ingest does not answer. */
const RETRY_AFTER_SECONDS = 5;

const validate = compileValidator<VehicleTrackReply>(VehicleTrackReply);

export interface VehicleTrackBus {
  ask(request: VehicleTrackRequest): Promise<VehicleTrackReply>;
}

export function createVehicleTrackBus(options: {
  nc: NatsConnection;
  namespace: string;
  logger: Logger;
}): VehicleTrackBus {
  const subject = natsNames(options.namespace).services.geoTrack.subjects.vehicle;
  const { logger } = options;
  const down = () =>
    unavailable("recent positions are unavailable (geo-ingest does not answer); retry later", RETRY_AFTER_SECONDS);

  return {
    async ask(request) {
      let msg: Msg;
      try {
        msg = await options.nc.request(subject, JSON.stringify(request), { timeout: TRACK_TIMEOUT_MS });
      } catch (error) {
        logger.warn({ err: error, subject }, "geo-ingest did not answer a vehicle track request");
        throw down();
      }
      const decoded = jsonBody(msg);
      const code = msg.headers?.get(SERVICE_ERROR_HEADERS.code);
      if (code) {
        const messages = (decoded as { errors?: unknown } | undefined)?.errors;
        if (code === "422" && Array.isArray(messages) && messages.length > 0) {
          throw new HttpError(422, messages.map(String));
        }
        logger.warn({ subject, code, errors: messages }, "geo-ingest refused a vehicle track request");
        throw down();
      }
      const checked = validate(decoded);
      if (!checked.ok) {
        logger.warn({ subject }, "geo-ingest answered a vehicle track request off the contract");
        throw down();
      }
      return checked.value;
    },
  };
}
