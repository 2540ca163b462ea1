/**
 * The operator API through the console, for staff sessions only: ANY /ops/v1/* is forwarded to
 * delivery-api's operator API with the session's staff token as the bearer, so delivery-api's
 * roles and audit apply to the person, and no rule is written twice. Without a staff session (a
 * shop session, or none) the routes do not exist: 404 as for any unknown route, before the CSRF
 * check, so nothing tells a shop user there is anything here. A staff token delivery-api refuses
 * (revoked, expired, the person disabled) ends the session.
 */
import { HttpError } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import { forward, forwardedTarget, relay } from "../delivery-api/forward.ts";
import { type CookieNames, checkCsrf } from "../sessions/cookies.ts";
import { staffSessionOf } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";

export interface OperatorApiOptions {
  opsUrl: string;
  timeoutMs: number;
  sessions: Sessions;
  cookies: CookieNames;
}

export async function operatorApiRoutes(app: FastifyInstance, options: OperatorApiOptions) {
  app.all("/ops/v1/*", async (request, reply) => {
    const target = forwardedTarget(request, options.opsUrl, "/ops/v1/");
    const user = await staffSessionOf(request, options.sessions, options.cookies);
    if (!user) {
      return reply.code(404).send({ errors: [`route ${request.method} ${request.url.split("?")[0]} not found`] });
    }
    checkCsrf(request, options.cookies);
    const answer = await forward(request, target, { authorization: `Bearer ${user.staffToken}` }, options.timeoutMs);
    if (answer.status === 401) {
      await options.sessions.end(user.sessionId);
      throw new HttpError(401, "the staff session has ended: sign in again");
    }
    return relay(reply, answer);
  });
}
