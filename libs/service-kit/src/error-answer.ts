/**
 * How an error is answered, whoever raised it (a route's handler, its schema, the body parser,
 * the framework): always the spec's shape, `{"errors": [...]}`, never a stack. Fastify's error
 * handler (http.ts) and the hot route (hot-route.ts) both answer through here.
 */
import type { FastifyError } from "fastify";
import { isDependencyDown } from "./dependency-errors.ts";
import { HttpError, validationMessages } from "./errors.ts";

/** How an error is answered: status, extra headers, messages, and the line logged, if any. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  messages: string[];
  log?: { level: "warn" | "error"; message: string };
}

const NO_HEADERS: Record<string, string> = {};

/** The answer to any error a route or the framework raised (every route's, and the hot route's). */
export function errorAnswer(error: FastifyError, bodyLimit: number): ErrorAnswer {
  if (error instanceof HttpError) {
    return {
      status: error.statusCode,
      headers: error.headers,
      messages: error.messages,
      ...(error.statusCode >= 500
        ? { log: { level: "warn", message: "request refused: dependency unavailable" } }
        : {}),
    };
  }
  if (error.validation) {
    const root = error.validationContext === "body" ? "" : (error.validationContext ?? "");
    return { status: 422, headers: NO_HEADERS, messages: validationMessages(error.validation as never, root) };
  }
  const known = clientErrorMessage(error, bodyLimit);
  if (known) return { status: known.status, headers: NO_HEADERS, messages: [known.message] };
  if (isDependencyDown(error)) {
    return {
      status: 503,
      headers: { "retry-after": "5" },
      messages: ["service is temporarily unavailable, retry later"],
      log: { level: "warn", message: "dependency unavailable" },
    };
  }
  if (typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, headers: NO_HEADERS, messages: [error.message] };
  }
  return {
    status: 500,
    headers: NO_HEADERS,
    messages: ["internal error; the request id is in the x-request-id header"],
    log: { level: "error", message: "unhandled error" },
  };
}

function clientErrorMessage(error: FastifyError, bodyLimit: number): { status: number; message: string } | null {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { status: 413, message: `body must be at most ${bodyLimit} bytes` };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return { status: 415, message: "Content-Type must be application/json" };
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return { status: 400, message: "Content-Length does not match the body" };
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return { status: 400, message: "body is not valid JSON" };
    default:
      return error instanceof SyntaxError ? { status: 400, message: "body is not valid JSON" } : null;
  }
}
