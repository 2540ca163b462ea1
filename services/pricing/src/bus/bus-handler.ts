/**
 * Adapts a function of a decoded message to a NATS services endpoint: JSON in, JSON out, and
 * every failure answered as a services error reply (never a silent timeout, never a price).
 */
import { SERVICE_NAMES } from "@dos/contracts";
import {
  contextFromNatsHeaders,
  isDependencyDown,
  type Logger,
  type Span,
  SpanKind,
  SpanStatusCode,
  startSpan,
  tracingEnabled,
} from "@dos/service-kit";
import type { ServiceHandler, ServiceMsg } from "@nats-io/services";
import { BusError, internalError, malformedRequest, storageUnavailable } from "../errors.ts";

/** Handles one decoded request; throws a BusError to refuse it. A synchronous answer skips a promise. */
export type BusHandle = (message: unknown) => unknown;

export function busHandler(logger: Logger, endpoint: string, handle: BusHandle): ServiceHandler {
  const answer = answerRequest(logger, endpoint, handle);
  return (error, msg) => {
    if (error) {
      logger.error({ err: error, endpoint }, "endpoint subscription failed");
      return;
    }
    if (!tracingEnabled()) return answer(msg);
    // The caller's span (delivery-api's pricing client) is in the headers; this one is its child.
    const span = startSpan(SERVICE_NAMES.pricing, `pricing ${endpoint}`, {
      kind: SpanKind.SERVER,
      parent: contextFromNatsHeaders(msg.headers),
      attributes: { "messaging.system": "nats", "messaging.destination.name": msg.subject },
    });
    answer(msg, span);
  };
}

/** Answers one request; the span, when traced, ends with the reply. */
function answerRequest(logger: Logger, endpoint: string, handle: BusHandle) {
  return (msg: ServiceMsg, span?: Span) => {
    const respond = (body: string) => {
      msg.respond(body);
      span?.end();
    };
    const fail = (failure: unknown) => {
      respondWithError(msg, failure, logger, endpoint);
      span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    };
    let message: unknown;
    try {
      message = msg.json();
    } catch {
      fail(malformedRequest(["body is not valid JSON"]));
      return;
    }
    let result: unknown;
    try {
      result = handle(message);
    } catch (failure) {
      fail(failure);
      return;
    }
    if (result instanceof Promise) {
      result.then((value) => respond(JSON.stringify(value)), fail);
    } else {
      respond(JSON.stringify(result));
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
