/**
 * The staff's sign-in routes, under /api/staff (the CSRF guard already ran on every change):
 * accept an invitation, enrol a second factor, sign in in two steps, who is signed in, sign
 * out; an administrator inviting a staff person from the pages. And the console's operator route
 * (internal listener) that invites a staff person.
 */

import { HttpError } from "@dos/service-kit";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { OpsClient } from "../delivery-api/ops-client.ts";
import {
  type CookieNames,
  clearChallengeCookie,
  clearSessionCookie,
  csrfToken,
  setChallengeCookie,
  setSessionCookie,
} from "../sessions/cookies.ts";
import { Email, liveStaffOf, Password, staffSessionOf } from "../sessions/sessions.routes.ts";
import type { Sessions, StaffSessionUser } from "../sessions/sessions.service.ts";
import type { StaffCredentials } from "./staff.service.ts";

export interface StaffRoutesOptions {
  staff: StaffCredentials;
  sessions: Sessions;
  ops: OpsClient;
  cookies: CookieNames;
}

const B64 = (max: number) => Type.String({ maxLength: max, pattern: "^[A-Za-z0-9_-]*={0,2}$" });
const Transports = Type.Array(Type.String({ maxLength: 20 }), { maxItems: 10 });
/** What @simplewebauthn/browser's startRegistration/startAuthentication answer, with sizes bounded. */
const CredentialCommon = {
  id: B64(1400),
  rawId: B64(1400),
  type: Type.Literal("public-key"),
  authenticatorAttachment: Type.Optional(Type.Union([Type.Literal("platform"), Type.Literal("cross-platform")])),
  clientExtensionResults: Type.Object({}, { additionalProperties: true, maxProperties: 10 }),
};
const RegistrationResponse = Type.Object(
  {
    ...CredentialCommon,
    response: Type.Object(
      {
        clientDataJSON: B64(4096),
        attestationObject: B64(16_384),
        authenticatorData: Type.Optional(B64(16_384)),
        transports: Type.Optional(Transports),
        publicKeyAlgorithm: Type.Optional(Type.Integer({ minimum: -65_536, maximum: 65_536 })),
        publicKey: Type.Optional(B64(4096)),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
const AuthenticationResponse = Type.Object(
  {
    ...CredentialCommon,
    response: Type.Object(
      {
        clientDataJSON: B64(4096),
        authenticatorData: B64(4096),
        signature: B64(4096),
        userHandle: Type.Optional(B64(400)),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const SignInBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
const InvitationBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 100 }), password: Password },
  { additionalProperties: false },
);
const CodeBody = Type.Object(
  { code: Type.String({ pattern: "^[0-9]{6}$", maxLength: 6, description: "the 6 digits the app shows" }) },
  { additionalProperties: false },
);
const PasskeyBody = Type.Object({ response: AuthenticationResponse }, { additionalProperties: false });
const NewPasskeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, pattern: "\\S" }), response: RegistrationResponse },
  { additionalProperties: false },
);
const InviteBody = Type.Object({ email: Email }, { additionalProperties: false });

/** Who is signed in, as delivery-api knows them now; a session whose token it refuses is over. */
async function staffView(options: StaffRoutesOptions, user: StaffSessionUser) {
  const actor = await options.ops.staffMe(user.staffToken);
  if (actor?.kind !== "staff" || actor.id !== user.staffId) {
    await options.sessions.end(user.sessionId);
    return undefined;
  }
  return { id: user.staffId, email: user.email, name: actor.name, role: actor.role };
}

export async function staffRoutes(app: FastifyInstance, options: StaffRoutesOptions) {
  const { staff, sessions, cookies } = options;
  const challenge = (request: FastifyRequest) => request.cookies[cookies.staffChallenge];

  /** Starts the staff session of a person who gave both factors, ending whatever this browser held. */
  async function signIn(request: FastifyRequest, reply: FastifyReply, staffId: number) {
    const previous = request.cookies[cookies.session];
    if (previous) await sessions.endByCookie(previous);
    const started = await sessions.startStaff(staffId);
    setSessionCookie(reply, cookies, started.cookie, started.expiresAt);
    clearChallengeCookie(reply, cookies);
    const csrf = csrfToken(request, reply, cookies, true);
    reply.header("cache-control", "no-store");
    const user = await sessions.resolveStaff(started.cookie);
    const view = user ? await staffView(options, user) : undefined;
    return { signed_in: view !== undefined, csrf_token: csrf, staff: view ?? null };
  }

  app.get("/staff/session", async (request, reply) => {
    reply.header("cache-control", "no-store");
    const csrf = csrfToken(request, reply, cookies);
    const user = await staffSessionOf(request, sessions, cookies);
    const view = user ? await staffView(options, user) : undefined;
    return { signed_in: view !== undefined, csrf_token: csrf, staff: view ?? null };
  });

  app.delete("/staff/session", async (request, reply) => {
    const user = await staffSessionOf(request, sessions, cookies);
    if (!user) return reply.code(401).send({ errors: ["sign in first: the session is missing or has ended"] });
    await sessions.end(user.sessionId);
    clearSessionCookie(reply, cookies);
    return reply.code(204).send();
  });

  /** The tokens this person's console sessions call with: the pages leave them out of the personal tokens. */
  app.get("/staff/session-tokens", async (request, reply) => {
    const user = await staffSessionOf(request, sessions, cookies);
    if (!user) return reply.code(401).send({ errors: ["sign in first: the session is missing or has ended"] });
    reply.header("cache-control", "no-store");
    return { token_ids: await sessions.staffTokenIds(user.staffId) };
  });

  app.post<{ Body: Static<typeof SignInBody> }>(
    "/staff/sign-in",
    { schema: { body: SignInBody } },
    async (request, reply) => {
      const opened = await staff.checkPassword(request.body.email.trim(), request.body.password, request.ip);
      setChallengeCookie(reply, cookies, opened.cookie, opened.expiresAt);
      reply.header("cache-control", "no-store");
      return { factors: opened.factors, expires_at: opened.expiresAt.toISOString() };
    },
  );

  app.get("/staff/sign-in", async (request, reply) => {
    reply.header("cache-control", "no-store");
    return staff.pendingSignIn(challenge(request));
  });

  app.post("/staff/sign-in/passkey-options", async (request, reply) => {
    reply.header("cache-control", "no-store");
    return staff.passkeyRequestOptions(challenge(request));
  });

  app.post<{ Body: Static<typeof PasskeyBody> }>(
    "/staff/sign-in/passkey",
    { schema: { body: PasskeyBody } },
    async (request, reply) => {
      const response = request.body.response as AuthenticationResponseJSON;
      const staffId = await staff.signInWithPasskey(challenge(request), response, request.ip);
      return signIn(request, reply, staffId);
    },
  );

  app.post<{ Body: Static<typeof CodeBody> }>(
    "/staff/sign-in/code",
    { schema: { body: CodeBody } },
    async (request, reply) => {
      const staffId = await staff.signInWithCode(challenge(request), request.body.code, request.ip);
      return signIn(request, reply, staffId);
    },
  );

  app.post<{ Body: Static<typeof InvitationBody> }>(
    "/staff/invitations/accept",
    { schema: { body: InvitationBody } },
    async (request, reply) => {
      const accepted = await staff.acceptInvitation(request.body.token, request.body.password);
      // Whoever held the old password or factors is signed out everywhere.
      await sessions.endAllStaff(accepted.staffId);
      setChallengeCookie(reply, cookies, accepted.cookie, accepted.expiresAt);
      reply.header("cache-control", "no-store");
      return { email: accepted.email, expires_at: accepted.expiresAt.toISOString() };
    },
  );

  app.get("/staff/enrolment", async (request, reply) => {
    reply.header("cache-control", "no-store");
    return staff.enrolment(challenge(request));
  });

  app.post("/staff/enrolment/totp", async (request, reply) => {
    // The secret is in this answer only: no cache may keep it.
    reply.header("cache-control", "no-store");
    return staff.offerTotp(challenge(request));
  });

  app.post<{ Body: Static<typeof CodeBody> }>(
    "/staff/enrolment/totp/confirm",
    { schema: { body: CodeBody } },
    async (request, reply) => {
      const staffId = await staff.confirmTotp(challenge(request), request.body.code);
      return signIn(request, reply, staffId);
    },
  );

  app.post("/staff/enrolment/passkey-options", async (request, reply) => {
    reply.header("cache-control", "no-store");
    return staff.passkeyCreationOptions(challenge(request));
  });

  app.post<{ Body: Static<typeof NewPasskeyBody> }>(
    "/staff/enrolment/passkey",
    { schema: { body: NewPasskeyBody } },
    async (request, reply) => {
      const response = request.body.response as RegistrationResponseJSON;
      const staffId = await staff.registerPasskey(challenge(request), request.body.name.trim(), response);
      return signIn(request, reply, staffId);
    },
  );
}

/**
 * POST /api/staff/invitations: an administrator invites a staff person (the console's own
 * invitation, as on its internal listener), the role checked with delivery-api at each call
 * (GET /ops/v1/staff/me with the session's token), never taken from the page. No staff session:
 * the 404 of a route that does not exist.
 */
export async function staffAdminRoutes(app: FastifyInstance, options: StaffRoutesOptions) {
  app.post<{ Body: Static<typeof InviteBody> }>(
    "/staff/invitations",
    { schema: { body: InviteBody } },
    async (request, reply) => {
      const live = await liveStaffOf(request, options);
      if (!live) {
        const ended = request.staffUser !== undefined;
        if (ended) throw new HttpError(401, "the staff session has ended: sign in again");
        return reply.code(404).send({ errors: [`route POST ${request.url.split("?")[0]} not found`] });
      }
      if (live.actor.role !== "admin") {
        throw new HttpError(403, `${live.actor.role} may not invite staff: administrators only`);
      }
      reply.header("cache-control", "no-store");
      return reply.code(201).send(await options.staff.invite(request.body.email.trim()));
    },
  );
}

/** The console's operator route for staff (internal listener only, operator bearer token). */
export async function staffOpsRoutes(app: FastifyInstance, options: { staff: StaffCredentials }) {
  app.post<{ Body: Static<typeof InviteBody> }>(
    "/staff/invitations",
    { schema: { body: InviteBody } },
    async (request, reply) => reply.code(201).send(await options.staff.invite(request.body.email.trim())),
  );
}
