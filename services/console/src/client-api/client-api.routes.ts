/**
 * The client API through the console: /api/v2/* is forwarded to delivery-api as the signed-in
 * user (X-User-Email and the session's own API token), so the client API's rules, messages,
 * tenant isolation and rate limit apply unchanged; the pages call it with a client generated
 * from its OpenAPI document. What crosses back is the status, the JSON body and the headers a
 * page may read (pagination, rate limit), nothing else.
 */

import { notFound, unavailable } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { CookieNames } from "../sessions/cookies.ts";
import { requireSession } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";

const FORWARDED_ANSWER_HEADERS = ["content-type", "link", "location", "ratelimit", "ratelimit-policy", "retry-after"];
const FORWARDED_REQUEST_HEADERS = ["content-type", "accept", "idempotency-key", "if-match"];

export interface ClientApiOptions {
  apiUrl: string;
  timeoutMs: number;
  sessions: Sessions;
  cookies: CookieNames;
}

export async function clientApiRoutes(app: FastifyInstance, options: ClientApiOptions) {
  app.all("/v2/*", async (request, reply) => {
    // The path is resolved before it is forwarded: `/api/v2/../../track/x` (dots, encoded or not)
    // would otherwise leave the client API with the user's credentials.
    const target = new URL(request.url, options.apiUrl);
    if (!target.pathname.startsWith("/api/v2/") || /%2e|%2f|%5c|\\/i.test(request.url.split("?")[0] ?? "")) {
      throw notFound(`route ${request.method} ${target.pathname.slice(0, 100)}`);
    }
    const user = await requireSession(request, options.sessions, options.cookies);
    const headers: Record<string, string> = { "x-user-email": user.email, "x-user-token": user.apiToken };
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const hasBody = request.body !== undefined && request.method !== "GET" && request.method !== "HEAD";
    let answer: Response;
    try {
      answer = await fetch(target, {
        method: request.method,
        headers,
        body: hasBody ? JSON.stringify(request.body) : undefined,
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: "manual",
      });
    } catch {
      throw unavailable("delivery-api is not answering, retry later");
    }
    reply.code(answer.status).header("cache-control", "no-store");
    for (const name of FORWARDED_ANSWER_HEADERS) {
      const value = answer.headers.get(name);
      if (value !== null) reply.header(name, value);
    }
    const body = Buffer.from(await answer.arrayBuffer());
    return reply.send(body.length > 0 ? body : undefined);
  });
}
