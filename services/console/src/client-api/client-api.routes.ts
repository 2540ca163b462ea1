/**
 * The client API through the console: /api/v2/* is forwarded to delivery-api as the signed-in
 * user (X-User-Email and the session's own API token), so the client API's rules, messages,
 * tenant isolation and rate limit apply unchanged; the pages call it with a client generated
 * from its OpenAPI document. What crosses back is the status, the JSON body and the headers a
 * page may read (pagination, rate limit), nothing else.
 */

import type { FastifyInstance } from "fastify";
import { forward, forwardedTarget, relay } from "../delivery-api/forward.ts";
import type { CookieNames } from "../sessions/cookies.ts";
import { requireSession } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";

export interface ClientApiOptions {
  apiUrl: string;
  timeoutMs: number;
  sessions: Sessions;
  cookies: CookieNames;
}

export async function clientApiRoutes(app: FastifyInstance, options: ClientApiOptions) {
  app.all("/v2/*", async (request, reply) => {
    const target = forwardedTarget(request, options.apiUrl, "/api/v2/");
    const user = await requireSession(request, options.sessions, options.cookies);
    const credentials = { "x-user-email": user.email, "x-user-token": user.apiToken };
    return relay(reply, await forward(request, target, credentials, options.timeoutMs));
  });
}
