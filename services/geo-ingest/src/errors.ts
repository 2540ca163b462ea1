/** Every error geo-ingest answers, declared once, in the spec's shape (`{"errors": [...]}`). */
import { HttpError, unauthorized, unavailable, unprocessable } from "@dos/service-kit";

export const vehicleNotFound = () => new HttpError(404, "vehicle_id is not a known vehicle External ID");

export const providerTokenMissing = () => unauthorized("X-Provider-Token is required for this vehicle");
export const providerTokenInvalid = () => unauthorized("X-Provider-Token is invalid");

export const trackerRateLimited = (intervalMs: number, retryAfterMs: number) =>
  new HttpError(
    429,
    `tracker sends more than one request per ${intervalMs === 1000 ? "second" : `${intervalMs} ms`}; retry later`,
    { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  );

export const providerMismatch = () => unprocessable("provider is not the provider of this vehicle");
export const trackerIdTooLarge = () => unprocessable(`tracker_id must be at most ${Number.MAX_SAFE_INTEGER}`);
export const timestampNotADate = () => unprocessable("timestamp is not a valid date");
export const timestampInFuture = (toleranceMs: number) =>
  unprocessable(`timestamp must not be more than ${Math.round(toleranceMs / 1000)} seconds in the future`);
export const timestampTooOld = (retentionDays: number) =>
  unprocessable(`timestamp must not be older than ${retentionDays} days`);

/** A different position of the vehicle is already stored at this (client-given) timestamp. */
export const timestampTaken = () => unprocessable("timestamp already holds a different position of this vehicle");
export const positionRefused = () => unprocessable("body cannot be stored");
export const fleetLoading = () => unavailable("vehicle registry is loading, retry later", 1);
export const cannotStoreNow = () => unavailable("position cannot be stored right now, retry later", 1);

/** The operator API's credentials. */
