/**
 * Forwarding a page's API call to delivery-api as the signed-in person (the client API for a
 * shop user, the operator API for a staff person): the path is resolved before anything else, so
 * no dot segment or encoded slash leaves the API it names; only a few request headers go, and
 * only the status, the JSON body and the headers a page may read come back.
 */
import { HttpError, notFound, unavailable } from "@dos/service-kit";
import type { FastifyReply, FastifyRequest } from "fastify";

const FORWARDED_ANSWER_HEADERS = ["content-type", "link", "location", "ratelimit", "ratelimit-policy", "retry-after"];
const FORWARDED_REQUEST_HEADERS = ["content-type", "accept", "idempotency-key", "if-match"];

/** The answers' types a page gets (the operator forwarder adds the proof images' own). */
const JSON_ANSWERS = ["application/json"] as const;
export const JSON_OR_IMAGE_ANSWERS = ["application/json", "image/jpeg", "image/png"] as const;

/**
 * The URL the request names under `prefix` (`/api/v2/`, `/ops/v1/`) at `baseUrl`, or a 404 as for
 * a route that does not exist: `/api/v2/../../track/x` (dots, encoded or not) would otherwise
 * leave the API with the person's credentials.
 */
export function forwardedTarget(request: FastifyRequest, baseUrl: string, prefix: string): URL {
  const target = new URL(request.url, baseUrl);
  if (!target.pathname.startsWith(prefix) || /%2e|%2f|%5c|\\/i.test(request.url.split("?")[0] ?? "")) {
    throw notFound(`route ${request.method} ${target.pathname.slice(0, 100)}`);
  }
  return target;
}

/** Sends the request on with these credentials and the allowed headers; delivery-api's answer. */
export async function forward(
  request: FastifyRequest,
  target: URL,
  credentials: Record<string, string>,
  timeoutMs: number,
): Promise<Response> {
  const headers: Record<string, string> = { ...credentials };
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = request.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  const hasBody = request.body !== undefined && request.method !== "GET" && request.method !== "HEAD";
  // A Buffer is an image the operator forwarder took as it came (a proof upload); the rest is JSON.
  const body = !hasBody ? undefined : Buffer.isBuffer(request.body) ? request.body : JSON.stringify(request.body);
  try {
    return await fetch(target, {
      method: request.method,
      headers,
      body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "manual",
    });
  } catch {
    throw unavailable("delivery-api is not answering, retry later");
  }
}

/**
 * Answers with delivery-api's status, body and the headers a page may read; never cached. A body
 * of a type not in `types` is not passed on (502): the console's origin serves nothing else.
 */
export async function relay(reply: FastifyReply, answer: Response, types: readonly string[] = JSON_ANSWERS) {
  const body = Buffer.from(await answer.arrayBuffer());
  const type = (answer.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (body.length > 0 && !types.includes(type)) {
    throw new HttpError(502, "delivery-api answered with a type the console does not pass on");
  }
  reply.code(answer.status).header("cache-control", "no-store");
  for (const name of FORWARDED_ANSWER_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) reply.header(name, value);
  }
  return reply.send(body.length > 0 ? body : undefined);
}
