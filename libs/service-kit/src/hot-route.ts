/**
 * A hot route: one POST route with one path parameter and a JSON body, answered straight from
 * node:http's request event rather than through Fastify's request and reply objects, hooks and
 * promise chain. For the tracker interface (tens of thousands of positions a second) that chain
 * costs more server CPU than storing the position does; here each request costs its few checks.
 *
 * The route is registered in Fastify as usual, and the hot path answers exactly as Fastify would,
 * with the same pieces: the request id, the JSON body's checks (UTF-8, shape, secure parse, text
 * guard), the route's body schema through the same bounded validator, the handler, the error
 * answers (errorAnswer) and their log lines, the security header, the duration histogram's series
 * of the route, `Connection: close` from the shutdown on. It takes only the plain case and hands
 * anything else to Fastify before reading a byte of the body, where the same route answers it:
 * another method or URL form (percent-encoding, a query string, a trailing slash, a segment over
 * the router's limit), a body without Content-Length, empty or over the limit, another
 * Content-Type, tracing on (its spans come from Fastify's instrumentation), or the shutdown begun.
 * Requests made with inject() never reach a server, so tests using it go through Fastify; the
 * kit's hot-route test compares both paths over real sockets.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ValidateFunction } from "@dos/contracts";
import type { FastifyError } from "fastify";
import type { Logger } from "pino";
import { type ErrorAnswer, errorAnswer } from "./error-answer.ts";
import { HttpError } from "./errors.ts";
import { jsonShapeProblem } from "./json-shape.ts";
import type { Lifecycle } from "./lifecycle.ts";
import type { DurationRecorder } from "./metrics.ts";
import { bodyText, mayHoldForbiddenText, textProblems } from "./text-guard.ts";
import { tracingEnabled } from "./tracing.ts";

export interface HotRoute<Body> {
  /** The route's URL as registered in Fastify, with one parameter: `/external/vehicles/:vehicle_id/geolocations`. */
  url: string;
  /** The route's body schema, as registered in Fastify. */
  body: unknown;
  /** Log level of the route (its Fastify `logLevel`): at `info` or below, each answer writes its access line. */
  logLevel: string;
  /**
   * Serves a request whose body passed the schema, as the route's Fastify handler does: resolves
   * to answer 200 with an empty body; rejects with what the handler throws (an HttpError...).
   */
  handle(param: string, body: Body, headers: IncomingMessage["headers"]): Promise<unknown>;
}

/** What the hot path needs of the app (createHttpApp gives it). */
export interface HotRouteContext {
  logger: Logger;
  lifecycle: Lifecycle;
  bodyLimit: number;
  maxParamLength: number;
  requestIdPattern: RegExp;
  compileBody(schema: unknown, url: string): ValidateFunction;
  /** Fastify's JSON parser (secure-json-parse, prototype poisoning refused), as the app's body parser uses it. */
  parseJson(text: string, done: (error: Error | null, value?: unknown) => void): void;
  durationsOf(route: string): DurationRecorder;
  loggedUrl(url: string): string;
}

/** A request's listener: true when it took the request, false when Fastify must serve it. */
export type HotRequestListener = (request: IncomingMessage, response: ServerResponse) => boolean;

/** Characters a path segment may hold and reach the handler as it is (no percent-decoding). */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]+$/;
const JSON_TYPES = new Set(["application/json", "application/json; charset=utf-8"]);

export function hotRouteListener<Body>(route: HotRoute<Body>, context: HotRouteContext): HotRequestListener {
  const [prefix, suffix, ...rest] = route.url.split(/:[A-Za-z0-9_]+/);
  if (prefix === undefined || suffix === undefined || rest.length > 0 || suffix.includes(":")) {
    throw new Error(`hot route ${route.url}: the URL must hold exactly one parameter`);
  }
  const validate = context.compileBody(route.body, route.url);
  const record = context.durationsOf(route.url);
  const { logger, lifecycle, bodyLimit } = context;
  const infoLevel = logger.levels.values.info ?? 30;
  const accessLines = (logger.levels.values[route.logLevel] ?? infoLevel) <= infoLevel;

  /** The answer, with the headers Fastify's would carry (the kit's hooks: request id, nosniff, close). */
  const answer = (
    response: ServerResponse,
    id: string,
    started: number,
    status: number,
    body: string,
    extra?: Record<string, string>,
    close = false,
  ) => {
    const headers: Record<string, string | number> = {
      "x-request-id": id,
      "x-content-type-options": "nosniff",
      ...extra,
    };
    if (body !== "") headers["content-type"] = "application/json; charset=utf-8";
    headers["content-length"] = Buffer.byteLength(body);
    if (close || lifecycle.shuttingDown) headers.connection = "close";
    response.writeHead(status, headers).end(body);
    const seconds = (performance.now() - started) / 1000;
    record("POST", status, seconds);
    if (accessLines) {
      logger.child({ request_id: id }, { level: route.logLevel }).info(
        {
          method: "POST",
          url: context.loggedUrl(response.req.url ?? ""),
          status,
          ms: Math.round(seconds * 10_000) / 10,
        },
        "request completed",
      );
    }
  };

  const refuse = (response: ServerResponse, id: string, started: number, error: unknown, close = false) => {
    const refusal: ErrorAnswer = errorAnswer(error as FastifyError, bodyLimit);
    // At the route's level, as Fastify's request logger writes.
    if (refusal.log) {
      logger
        .child({ request_id: id }, { level: route.logLevel })
        [refusal.log.level]({ err: error }, refusal.log.message);
    }
    answer(response, id, started, refusal.status, JSON.stringify({ errors: refusal.messages }), refusal.headers, close);
  };

  /**
   * The body's checks in the order the app's JSON parser and Fastify's validation run them.
   * `parserRefused`: the body parser refused it, for which Fastify closes the connection.
   */
  const parse = (raw: Buffer, done: (error: unknown, body?: Body, parserRefused?: boolean) => void) => {
    const shapeProblem = jsonShapeProblem(raw);
    if (shapeProblem) return done(new HttpError(422, shapeProblem), undefined, true);
    const text = bodyText(raw);
    if (text === null) return done(new HttpError(400, "body is not valid UTF-8"), undefined, true);
    const judge = (value: unknown) => {
      // Fastify validates a missing body as null.
      if (validate(value === undefined ? null : value)) return done(null, value as Body);
      done(Object.assign(new Error("body validation"), { validation: validate.errors, validationContext: "body" }));
    };
    if (text.trim() === "") return judge(undefined);
    // The parser calls back at once; what follows runs outside its callback, whose try block would
    // otherwise take an exception of ours for a JSON error and call back a second time.
    let parsed: { error: Error | null; value?: unknown } = { error: new Error("not parsed") };
    context.parseJson(text, (error, value) => {
      parsed = { error, value };
    });
    if (parsed.error) return done(new HttpError(400, "body is not valid JSON"), undefined, true);
    const problems = mayHoldForbiddenText(text) ? textProblems(parsed.value) : [];
    if (problems.length > 0) return done(new HttpError(422, problems), undefined, true);
    judge(parsed.value);
  };

  return (request, response) => {
    const url = request.url ?? "";
    if (request.method !== "POST" || !url.startsWith(prefix) || !url.endsWith(suffix)) return false;
    const param = url.slice(prefix.length, url.length - suffix.length);
    if (param.length > context.maxParamLength || !PLAIN_SEGMENT.test(param) || param === "." || param === "..") {
      return false;
    }
    const { headers } = request;
    const length = headers["content-length"];
    if (
      length === undefined ||
      length === "0" ||
      Number(length) > bodyLimit ||
      headers["transfer-encoding"] !== undefined ||
      !JSON_TYPES.has(headers["content-type"] ?? "") ||
      lifecycle.shuttingDown ||
      tracingEnabled()
    ) {
      return false;
    }
    const started = performance.now();
    const given = headers["x-request-id"];
    const id = typeof given === "string" && context.requestIdPattern.test(given) ? given : randomUUID();
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    // A client gone before the end of its body gets no answer, as from Fastify.
    request.on("error", () => {});
    request.on("end", () => {
      parse(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), (error, body, parserRefused) => {
        if (error) return refuse(response, id, started, error, parserRefused);
        route.handle(param, body as Body, headers).then(
          () => answer(response, id, started, 200, ""),
          (failure: unknown) => refuse(response, id, started, failure),
        );
      });
    });
    return true;
  };
}
