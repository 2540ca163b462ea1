/**
 * Public routes of the people feature, under /api: accept an invitation and set a password,
 * ask for and complete a password reset. Each completed link signs the person in.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { Email, Password, type SessionRoutesOptions, signIn } from "../sessions/sessions.routes.ts";

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
