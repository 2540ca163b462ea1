/**
 * A service of the NATS services framework (discoverable with `$SRV.PING`, `$SRV.INFO`,
 * `$SRV.STATS`) whose endpoints share a queue group, so that replicas split the requests, and
 * answer JSON with JSON. A request whose body is not JSON is refused (400); one that breaks the
 * endpoint's schema, when it has one, too (422, naming the fields). A refusal is an HttpError:
 * its reply is a services error reply whose `Nats-Service-Error-Code` is the HTTP status to
 * answer and whose body is an ErrorBody, so that the asking service passes it on unchanged.
 * PostgreSQL down is a 503 (logged as a warning), anything else a 500 (logged in full, told
 * little): never a silent timeout. A traced request gets a server span, child of the caller's.
 */
import { compileValidator } from "@dos/contracts";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Service, type ServiceMsg, Svcm } from "@nats-io/services";
import type { TSchema } from "@sinclair/typebox";
import { isDependencyDown } from "./dependency-errors.ts";
import { HttpError, validationMessages } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { contextFromNatsHeaders } from "./nats-tracing.ts";
import { type Span, SpanKind, SpanStatusCode, startSpan, tracingEnabled } from "./tracing.ts";

export type { Service as NatsService } from "@nats-io/services";

/**
 * @nats-io/services 3.0.0-25 is typed against its own pinned nats-core, whose `Match` was an
 * enum; at run time it only calls subscribe, publish and respond on the connection, which behave
 * the same on the nats-core the services use (pricing's test/pricing-bus.test.ts).
 */
type SvcmConnection = ConstructorParameters<typeof Svcm>[0];

export interface JsonServiceOptions {
  nc: NatsConnection;
  /** The service's name, version and description as `$SRV.INFO` reports them. */
  name: string;
  version: string;
  description: string;
  /** The queue group every replica's endpoints join. */
  queue: string;
  logger: Logger;
  /** The tracer (the answering service's name) of the server spans. */
  tracer: string;
  /** The message of a 503, when PostgreSQL does not answer. */
  unavailable: string;
}

export interface JsonService {
  /** The framework's service: `stopped` settles when it stops, `stop()` lets in-flight handlers finish. */
  service: Service;
  /**
   * Adds an endpoint: `handle` takes the request's JSON (checked against `schema` when given)
   * and returns the reply's value, or a promise of it (a synchronous answer skips a promise).
   */
  endpoint<T>(name: string, subject: string, handle: (request: T) => unknown, schema?: TSchema): void;
}

export async function startJsonService(options: JsonServiceOptions): Promise<JsonService> {
  const { logger } = options;
  const service = await new Svcm(options.nc as unknown as SvcmConnection).add({
    name: options.name,
    version: options.version,
    description: options.description,
    queue: options.queue,
  });
  return {
    service,
    endpoint<T>(name: string, subject: string, handle: (request: T) => unknown, schema?: TSchema) {
      // Without a schema the handler takes the message as it is (pricing's quotes check their own).
      const validate = schema ? compileValidator<T>(schema) : null;
      const run = validate
        ? (message: unknown) => {
            const result = validate(message);
            if (!result.ok) throw new HttpError(422, validationMessages(result.errors));
            return handle(result.value);
          }
        : (handle as (message: unknown) => unknown);
      const answer = answerRequest(logger, options.unavailable, name, run);
      service.addEndpoint(name, {
        subject,
        handler: (error, msg) => {
          if (error) {
            logger.error({ err: error, endpoint: name }, "endpoint subscription failed");
            return;
          }
          if (!tracingEnabled()) return answer(msg);
          const span = startSpan(options.tracer, `${options.tracer} ${name}`, {
            kind: SpanKind.SERVER,
            parent: contextFromNatsHeaders(msg.headers),
            attributes: { "messaging.system": "nats", "messaging.destination.name": msg.subject },
          });
          answer(msg, span);
        },
      });
    },
  };
}

/** Answers one request; the span, when traced, ends with the reply. */
function answerRequest(logger: Logger, unavailable: string, endpoint: string, handle: (message: unknown) => unknown) {
  return (msg: ServiceMsg, span?: Span) => {
    const respond = (body: string) => {
      msg.respond(body);
      span?.end();
    };
    const fail = (failure: unknown) => {
      respondWithError(msg, refusalOf(failure, logger, unavailable, endpoint));
      span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    };
    let message: unknown;
    try {
      message = msg.json();
    } catch {
      fail(new HttpError(400, "body is not valid JSON"));
      return;
    }
    let result: unknown;
    try {
      result = handle(message);
    } catch (failure) {
      fail(failure);
      return;
    }
    if (result instanceof Promise) result.then((value) => respond(JSON.stringify(value ?? {})), fail);
    else respond(JSON.stringify(result ?? {}));
  };
}

function refusalOf(failure: unknown, logger: Logger, unavailable: string, endpoint: string): HttpError {
  if (failure instanceof HttpError) return failure;
  if (isDependencyDown(failure)) {
    logger.warn({ err: failure, endpoint }, "request refused: PostgreSQL unavailable");
    return new HttpError(503, unavailable);
  }
  logger.error({ err: failure, endpoint }, "request failed");
  return new HttpError(500, "internal error; see the service's logs");
}

function respondWithError(msg: ServiceMsg, error: HttpError) {
  // A header value is one line; the body carries the messages intact.
  const description = error.messages.join("; ").replace(/[\r\n]+/g, " ");
  msg.respondError(error.statusCode, description, JSON.stringify({ errors: error.messages }));
}
