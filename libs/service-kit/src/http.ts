/**
 * The Fastify factory of every service: request ids, JSON logging, one error handler that
 * answers in the spec's error shape and never leaks a stack, the health and metrics routes.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createAjv, type ErrorObject, type ValidateFunction } from "@dos/contracts";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import { assertBoundedSchema, boundedBodyValidator } from "./bounded-validation.ts";
import { clientErrorHandler } from "./client-error.ts";
import type { Database } from "./db.ts";
import { errorAnswer } from "./error-answer.ts";
import { HttpError } from "./errors.ts";
import type { ConnectionCounts } from "./fair-connections.ts";
import { type HealthChecks, PROBE_PATHS, registerHealthRoutes } from "./health.ts";
import { type HotRequestListener, type HotRoute, hotRouteListener } from "./hot-route.ts";
import { internalRoutesGuard } from "./internal-listener.ts";
import { jsonShapeProblem } from "./json-shape.ts";
import type { Lifecycle } from "./lifecycle.ts";
import { type AppMetrics, registerMetrics } from "./metrics.ts";
import { lazyChildLoggerFactory } from "./request-logger.ts";
import { nullableUnionSerializer } from "./response-serializer.ts";
import { registerSecurityHeaders } from "./security-headers.ts";
import { type HttpTimeouts, serverTimeoutOptions } from "./server-timeouts.ts";
import { bodyText, mayHoldForbiddenText, textProblems } from "./text-guard.ts";
import { URL_FOR_SPANS } from "./tracing-config.ts";

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  lifecycle: Lifecycle;
  /** Named readiness checks (nats, ...); each throws when its dependency is down. `database` adds `postgres`. */
  checks: HealthChecks;
  /** Largest request body accepted, in bytes. */
  bodyLimit?: number;
  /**
   * Routes under this path prefix (e.g. "/ops") exist only on the internal listener
   * (listenInternal); on the public port they answer 404 like any unknown route.
   */
  internalPrefix?: string;
  /** The connection timeouts (commonConfig's HTTP_* variables); the defaults there when absent. */
  timeouts?: Partial<HttpTimeouts>;
  /**
   * How a request's URL is written to its access line and trace span: a service whose paths hold
   * secrets (a tracking token, an unguessable media id) hides them here. As received by default.
   */
  loggedUrl?: (url: string) => string;
  /**
   * The proxies (addresses, CIDRs) trusted to name the client in X-Forwarded-For, which
   * `request.ip` then is; none: the TCP peer. Per-address limits key on `request.ip`.
   */
  trustedProxies?: readonly string[];
  /**
   * The service's database: readiness checks it (`postgres`), and its connections are measured at
   * each scrape (`db_connection*`).
   */
  database?: Pick<Database<unknown>, "check" | "connections">;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const isProbe = (request: FastifyRequest) => PROBE_PATHS.has(request.url);

/**
 * One access line per request, when it completes, with only what an operator reads (Fastify's
 * default writes two lines and serialises the whole request and reply objects). Probes and
 * scrapes come every few seconds; their lines would drown the real traffic, so they have none.
 */
class AccessLog extends LogController {
  readonly #loggedUrl: (url: string) => string;

  constructor(options: ConstructorParameters<typeof LogController>[0], loggedUrl: (url: string) => string) {
    super(options);
    this.#loggedUrl = loggedUrl;
  }

  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (error || this.isLogDisabled(request)) return super.requestCompleted(error, request, reply);
    reply.log.info(
      {
        method: request.method,
        url: this.#loggedUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      "request completed",
    );
  }
}

export interface HttpApp {
  app: FastifyInstance;
  metrics: AppMetrics;
  /**
   * Serves a route registered in `app` also straight from node:http's request event, for its
   * plain requests (hot-route.ts): same answers, a fraction of Fastify's cost per request.
   */
  hotRoute<Body>(route: HotRoute<Body>): void;
}

/** Builds a Fastify instance with everything a service needs but its own routes. */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  const loggedUrl = options.loggedUrl ?? ((url: string) => url);
  const app: FastifyInstance = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    childLoggerFactory: lazyChildLoggerFactory,
    bodyLimit,
    ...serverTimeoutOptions(options.timeouts),
    trustProxy: options.trustedProxies?.length ? [...options.trustedProxies] : false,
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    logController: new AccessLog({ requestIdLogLabel: "request_id", disableRequestLogging: isProbe }, loggedUrl),
    return503OnClosing: true,
    forceCloseConnections: "idle",
    clientErrorHandler,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    frameworkErrors: routerRefusal,
    schemaController: { compilersFactory: { buildSerializer: nullableUnionSerializer() } },
  });

  // Bodies are judged strictly (no coercion); query strings and path parameters arrive as text.
  // A body's verdict comes from a validator that stops at the first problem (bounded-validation.ts).
  const bodyAjv = createAjv();
  const bodyReportAjv = createAjv({ allErrors: true });
  const textAjv = createAjv({ allErrors: true, coerceTypes: true });
  app.setValidatorCompiler(({ schema, httpPart, method, url }) => {
    assertBoundedSchema(schema, httpPart ?? "", `${method} ${url}`);
    if (httpPart === "body") return boundedBodyValidator(bodyAjv.compile(schema), bodyReportAjv.compile(schema));
    const validate = textAjv.compile(schema);
    return httpPart === "querystring" ? numbersInDigits(schema, validate) : validate;
  });

  // Empty JSON bodies are common on PATCH .../cancel; treat them as no body instead of an error.
  const defaultJson = app.getDefaultJsonParser("error", "error");
  // The APIs take JSON only: any other body, text/plain included, is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit }, (request, body, done) => {
    const shapeProblem = jsonShapeProblem(body as Buffer);
    if (shapeProblem) return done(new HttpError(422, shapeProblem), undefined);
    const text = bodyText(body as Buffer);
    if (text === null) return done(new HttpError(400, "body is not valid UTF-8"), undefined);
    if (text.trim() === "") return done(null, undefined);
    defaultJson(request, text, (error, value) => {
      if (error) return done(new HttpError(400, "body is not valid JSON"), undefined);
      const problems = mayHoldForbiddenText(text) ? textProblems(value) : [];
      if (problems.length > 0) return done(new HttpError(422, problems), undefined);
      done(null, value);
    });
  });

  // Callback hooks: an async hook costs a promise per request on every route.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    done();
  });
  if (options.internalPrefix) app.addHook("onRequest", internalRoutesGuard(options.internalPrefix));
  // A NUL in the query string would reach PostgreSQL as text it cannot hold (a 500); only a URL
  // holding "%00" is looked at, so other requests pay one substring search. Path parameters are
  // each route's own: an id that cannot be one is that route's 404.
  app.addHook("preValidation", (request, _reply, done) => {
    if (!request.url.includes("%00")) return done();
    const problems = textProblems(request.query);
    done(problems.length > 0 ? new HttpError(422, problems) : undefined);
  });

  // An answer given before the body was read (413, 404, 415...) must still reach the client: the
  // rest of the body is read and dropped first (a lingering close). Otherwise the connection
  // closes with the client's bytes unread, the kernel resets it, and a client that reads only
  // once it has sent everything loses the answer (every time, measured: 20 of 20 413s lost).
  app.addHook("onSend", (request, reply, payload, done) => {
    // From SIGTERM on, each answer closes its connection. A keep-alive connection busy when the
    // server began to close turns idle only afterwards, and nothing closes it then: the drain
    // waited for the client's idle timeout and ran out of time (geo-ingest, measured: exit 1
    // after 10 s with one position in flight).
    if (options.lifecycle.shuttingDown) reply.header("connection", "close");
    const raw = request.raw;
    // readableEnded too: an injected request (light-my-request) never sets `complete`.
    if (raw.complete || raw.readableEnded || raw.destroyed) return done(null, payload);
    void discardRestOfBody(raw).then(() => done(null, payload));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => sendError(error, request, reply, bodyLimit));
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ errors: [`route ${request.method} ${request.url.split("?")[0]} not found`] });
  });

  registerSecurityHeaders(app);
  // The server span (tracing-instrumentations.ts) writes the URL as the access line does.
  app.decorate(URL_FOR_SPANS, loggedUrl);
  const { metrics, durationsOf } = registerMetrics(app, options.service);
  if (options.database) registerConnectionGauges(metrics, options.database);
  const checks = options.database ? { postgres: options.database.check, ...options.checks } : options.checks;
  registerHealthRoutes(app, options.lifecycle, checks);

  const hotListeners: HotRequestListener[] = [];
  const hotRoute = <Body>(route: HotRoute<Body>) => {
    if (options.internalPrefix && route.url.startsWith(options.internalPrefix)) {
      throw new Error(`hot route ${route.url}: internal routes go through Fastify (internalRoutesGuard)`);
    }
    if (hotListeners.length === 0) {
      // Fastify's handler is the server's one request listener: the hot routes look first.
      const [fastify, ...others] = app.server.listeners("request") as Array<
        (request: IncomingMessage, response: ServerResponse) => void
      >;
      if (!fastify || others.length > 0) throw new Error("hot route: the server must have Fastify's listener alone");
      app.server.removeListener("request", fastify);
      app.server.on("request", (request: IncomingMessage, response: ServerResponse) => {
        for (const listener of hotListeners) if (listener(request, response)) return;
        fastify(request, response);
      });
    }
    hotListeners.push(
      hotRouteListener(route, {
        logger: options.logger,
        lifecycle: options.lifecycle,
        bodyLimit,
        maxParamLength: MAX_PARAM_LENGTH,
        requestIdPattern: REQUEST_ID,
        compileBody(schema, url) {
          assertBoundedSchema(schema, "body", `POST ${url}`);
          return boundedBodyValidator(bodyAjv.compile(schema as object), bodyReportAjv.compile(schema as object));
        },
        parseJson: (text, done) => defaultJson(undefined as never, text, done as never),
        durationsOf,
        loggedUrl,
      }),
    );
  };
  return { app, metrics, hotRoute };
}

/** The most of an unread body dropped, and the longest wait for it, before answering anyway. */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;
const LINGER_MAX_MS = 2000;

/** Reads and drops what is left of a request body; resolves at its end, or at a limit. */
function discardRestOfBody(raw: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off("data", onData).off("end", finish).off("close", finish).off("error", finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > LINGER_MAX_BYTES) finish();
    };
    const timer = setTimeout(finish, LINGER_MAX_MS);
    raw.on("data", onData).once("end", finish).once("close", finish).once("error", finish);
    raw.resume();
  });
}

/** Longest path segment the router matches; a longer one is refused before any route runs. */
const MAX_PARAM_LENGTH = 200;

/**
 * What the router refuses before any route or hook runs (so the request id header is set here):
 * in the error shape like every other answer, and without echoing the path, which may be long
 * or hostile. Fastify's own answers would be `{error, code, message, statusCode}`.
 */
function routerRefusal(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header("x-request-id", request.id);
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    return reply.code(414).send({ errors: [`a path segment is longer than ${MAX_PARAM_LENGTH} characters`] });
  }
  if (error.code === "FST_ERR_BAD_URL") {
    return reply.code(400).send({ errors: ["the URL's path is not valid percent-encoding"] });
  }
  // Only an async route constraint, which no service uses, can fail otherwise: a server error.
  return sendError(error, request, reply, 0);
}

/** How a query-string number may be written. */
const DIGITS = { integer: /^-?\d+$/, number: /^-?\d+(\.\d+)?$/ };

/**
 * A query string's validator that reads a number only when it is written in decimal digits.
 * Coercion would otherwise read `0x10` as 16, `1e1` as 10, `0b11` as 3 or ` 1` as 1, as it did
 * delivery ids before they were checked the same way. The numeric fields are found once, when
 * the route is compiled; a refusal is an ordinary `type` error, worded like any other.
 */
function numbersInDigits(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const numeric = Object.entries(properties)
    .filter(([, property]) => property.type === "integer" || property.type === "number")
    .map(([name, property]) => ({ name, type: property.type as keyof typeof DIGITS }));
  if (numeric.length === 0) return validate;
  const checked = ((data: Record<string, unknown> | null, context?: unknown) => {
    const errors: ErrorObject[] = numeric
      .filter(({ name, type }) => typeof data?.[name] === "string" && !DIGITS[type].test(data[name] as string))
      .map(({ name, type }) => ({
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}/type`,
        keyword: "type",
        params: { type },
        message: `must be ${type}`,
      }));
    if (errors.length > 0) {
      checked.errors = errors;
      return false;
    }
    const valid = validate(data, context as never);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  // Fastify hands an Ajv validator its parent object only when it sees this.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

function sendError(error: FastifyError, request: FastifyRequest, reply: FastifyReply, bodyLimit: number) {
  const answer = errorAnswer(error, bodyLimit);
  if (answer.log) request.log[answer.log.level]({ err: error }, answer.log.message);
  return reply.code(answer.status).headers(answer.headers).send({ errors: answer.messages });
}

/** What a scrape tells of the database connections (fair-connections.ts). */
function registerConnectionGauges(metrics: AppMetrics, database: Pick<Database<unknown>, "connections">) {
  const gauge = (name: string, help: string, read: (counts: ConnectionCounts) => number) =>
    metrics.gauge(name, help, [], (g) => g.set(read(database.connections())));
  gauge("db_connections_in_use", "PostgreSQL connections handed out to queries", (c) => c.inUse);
  gauge("db_connection_waiters", "Queries waiting for a PostgreSQL connection", (c) => c.waiting);
  gauge(
    "db_connection_tenants_waiting",
    "Tenants (accounts) with a query waiting for a PostgreSQL connection",
    (c) => c.tenantsWaiting,
  );
}
