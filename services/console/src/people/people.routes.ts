/**
 * Public routes of the people feature, under /api: accept an invitation and set a password,
 * ask for and complete a password reset. Each completed link signs the person in. And the
 * invitation of a shop's user by the operator: on the internal listener (operator token), and
 * for the staff's administrators in their session (`/api/staff/user-invitations`).
 */
import { forbidden, HttpError } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { Email, Password, type SessionRoutesOptions, signIn, staffSessionOf } from "../sessions/sessions.routes.ts";

const LinkBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 100 }), password: Password },
  { additionalProperties: false },
);
const ResetBody = Type.Object({ email: Email }, { additionalProperties: false });

export async function peopleRoutes(app: FastifyInstance, options: SessionRoutesOptions) {
  const { people, sessions } = options;

  app.post<{ Body: Static<typeof LinkBody> }>(
    "/invitations/accept",
    { schema: { body: LinkBody } },
    async (request, reply) => {
      const user = await people.acceptInvitation(request.body.token, request.body.password);
      reply.header("cache-control", "no-store");
      return signIn(reply, request, options, user);
    },
  );

  app.post<{ Body: Static<typeof ResetBody> }>(
    "/password-resets",
    { schema: { body: ResetBody } },
    async (request, reply) => {
      await people.requestReset(request.body.email.trim());
      return reply.code(202).send({ sent: "if this e-mail has a console account, a reset link is on its way" });
    },
  );

  app.post<{ Body: Static<typeof LinkBody> }>(
    "/password-resets/complete",
    { schema: { body: LinkBody } },
    async (request, reply) => {
      const user = await people.completeReset(request.body.token, request.body.password);
      // Whoever knew the old password is signed out everywhere.
      await sessions.endAll(user.id);
      reply.header("cache-control", "no-store");
      return signIn(reply, request, options, user);
    },
  );
}

/** The console's operator routes (internal listener only, operator bearer token): invitations. */
export async function peopleOpsRoutes(app: FastifyInstance, options: { people: SessionRoutesOptions["people"] }) {
  app.post<{ Body: Static<typeof ResetBody> }>(
    "/invitations",
    { schema: { body: ResetBody } },
    async (request, reply) => reply.code(201).send(await options.people.invite(request.body.email.trim())),
  );
}

/**
 * A staff administrator invites a shop's user from the staff pages (under /api, the CSRF guard
 * already ran). The role is delivery-api's, asked with the session's own staff token at each
 * call (`GET /ops/v1/staff/me`): never what the page says, nor what the session held at sign-in.
 */
export async function staffInvitationRoutes(app: FastifyInstance, options: SessionRoutesOptions) {
  app.post<{ Body: Static<typeof ResetBody> }>(
    "/staff/user-invitations",
    { schema: { body: ResetBody } },
    async (request, reply) => {
      const user = await staffSessionOf(request, options.sessions, options.cookies);
      if (!user) return reply.code(401).send({ errors: ["sign in first: the session is missing or has ended"] });
      const actor = await options.ops.staffMe(user.staffToken);
      if (actor?.kind !== "staff" || actor.id !== user.staffId) {
        await options.sessions.end(user.sessionId);
        throw new HttpError(401, "the staff session has ended: sign in again");
      }
      if (actor.role !== "admin") throw forbidden(`${actor.role} may not invite a shop's users: administrators only`);
      reply.header("cache-control", "no-store");
      return reply.code(201).send(await options.people.invite(request.body.email.trim()));
    },
  );
}
