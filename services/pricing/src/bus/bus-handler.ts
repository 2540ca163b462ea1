/**
 * Adapts a function of a decoded message to a NATS services endpoint: JSON in, JSON out, and
 * every failure answered as a services error reply (never a silent timeout, never a price).
 */
import { isDependencyDown, type Logger } from "@dos/service-kit";
import type { ServiceHandler, ServiceMsg } from "@nats-io/services";
import { BusError, internalError, malformedRequest, storageUnavailable } from "../errors.ts";

/** Handles one decoded request; throws a BusError to refuse it. A synchronous answer skips a promise. */
export type BusHandle = (message: unknown) => unknown;

export function busHandler(logger: Logger, endpoint: string, handle: BusHandle): ServiceHandler {
  return (error, msg) => {
    if (error) {
      logger.error({ err: error, endpoint }, "endpoint subscription failed");
      return;
    }
    let message: unknown;
    try {
      message = msg.json();
    } catch {
      respondWithError(msg, malformedRequest(["body is not valid JSON"]), logger, endpoint);
      return;
    }
    let result: unknown;
    try {
      result = handle(message);
    } catch (failure) {
      respondWithError(msg, failure, logger, endpoint);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (value) => msg.respond(JSON.stringify(value)),
        (failure) => respondWithError(msg, failure, logger, endpoint),
      );
    } else {
      msg.respond(JSON.stringify(result));
    }
  };
}

function respondWithError(msg: ServiceMsg, failure: unknown, logger: Logger, endpoint: string): void {
  let error: BusError;
  if (failure instanceof BusError) {
    error = failure;
  } else if (isDependencyDown(failure)) {
    logger.warn({ err: failure, endpoint }, "request refused: PostgreSQL unavailable");
    error = storageUnavailable();
  } else {
    logger.error({ err: failure, endpoint }, "request failed");
    error = internalError();
  }
  // A header value is one line; the body carries the messages intact.
  const description = error.messages.join("; ").replace(/[\r\n]+/g, " ");
  msg.respondError(error.code, description, JSON.stringify({ errors: error.messages }));
}
