/**
 * The operator API through the console, for staff sessions only: ANY /ops/v1/* is forwarded to
 * delivery-api's operator API with the session's staff token as the bearer, so delivery-api's
 * roles and audit apply to the person, and no rule is written twice. Without a staff session (a
 * shop session, or none) the routes do not exist: 404 as for any unknown route, before the CSRF
 * check and before any body is read, so nothing tells a shop user there is anything here. A staff
 * token delivery-api refuses (revoked, expired, the person disabled) ends the session.
 *
 * Bodies are JSON, but for a task's proof: `POST /ops/v1/tasks/{id}/pictures` and
 * `PUT /ops/v1/tasks/{id}/signature` take a JPEG or PNG as it comes, up to delivery-api's own
 * limit. Answers are JSON, or the JPEG and PNG proof images `GET /ops/v1/media/{id}` serves.
 */
import { PROOF_IMAGE_MAX_BYTES } from "@dos/contracts";
import { HttpError } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import { forward, forwardedTarget, JSON_OR_IMAGE_ANSWERS, relay } from "../delivery-api/forward.ts";
import { type CookieNames, checkCsrf } from "../sessions/cookies.ts";
import { staffSessionOf } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";

export interface OperatorApiOptions {
  opsUrl: string;
  timeoutMs: number;
  sessions: Sessions;
  cookies: CookieNames;
}

/** The two routes that take an image body (their ids as the API's path ids: digits). */
const PROOF_UPLOAD = /^\/ops\/v1\/tasks\/\d{1,16}\/(pictures|signature)$/;
const IMAGE_TYPES = ["image/jpeg", "image/png"];

export async function operatorApiRoutes(app: FastifyInstance, options: OperatorApiOptions) {
  // In this plugin only: the rest of the console takes JSON alone.
  app.addContentTypeParser(
    IMAGE_TYPES,
    { parseAs: "buffer", bodyLimit: PROOF_IMAGE_MAX_BYTES },
    (request, body, done) => {
      const upload = PROOF_UPLOAD.test(request.url.split("?")[0] ?? "") && ["POST", "PUT"].includes(request.method);
      if (!upload) done(new HttpError(415, "an image body is taken by a task's pictures and signature only"));
      else done(null, body);
    },
  );
  // Before the body is read: a shop user's or a stranger's upload is not even received.
  app.addHook("onRequest", async (request, reply) => {
    const user = await staffSessionOf(request, options.sessions, options.cookies);
    if (!user) {
      return reply.code(404).send({ errors: [`route ${request.method} ${request.url.split("?")[0]} not found`] });
    }
    checkCsrf(request, options.cookies);
  });
  app.all("/ops/v1/*", async (request, reply) => {
    const target = forwardedTarget(request, options.opsUrl, "/ops/v1/");
    const user = await staffSessionOf(request, options.sessions, options.cookies);
    if (!user) throw new Error("the onRequest hook lets staff sessions through only");
    const answer = await forward(request, target, { authorization: `Bearer ${user.staffToken}` }, options.timeoutMs);
    if (answer.status === 401) {
      await options.sessions.end(user.sessionId);
      throw new HttpError(401, "the staff session has ended: sign in again");
    }
    return relay(reply, answer, JSON_OR_IMAGE_ANSWERS);
  });
}
