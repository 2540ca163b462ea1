/**
 * The BFF's sign-in routes, under /api (the CSRF guard already ran on every change):
 * who is signed in, sign in, sign out, sign out everywhere; and the pages' view of the account.
 */
import { HttpError, unauthorized } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { OpsClient, StaffActor } from "../delivery-api/ops-client.ts";
import { PASSWORD_MAX } from "../people/passwords.ts";
import type { People } from "../people/people.service.ts";
import { type CookieNames, clearSessionCookie, csrfToken, setSessionCookie } from "./cookies.ts";
import type { Sessions, SessionUser, StaffSessionUser } from "./sessions.service.ts";

export const Email = Type.String({ format: "email", maxLength: 254 });
export const Password = Type.String({ minLength: 1, maxLength: PASSWORD_MAX });

const SignInBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });

export interface SessionRoutesOptions {
  sessions: Sessions;
  people: People;
  ops: OpsClient;
  cookies: CookieNames;
}

declare module "fastify" {
  interface FastifyRequest {
    sessionUser?: SessionUser;
    staffUser?: StaffSessionUser;
  }
}

/** The session of the request, or a 401 in the error shape. */
export async function requireSession(
  request: FastifyRequest,
  sessions: Sessions,
  cookies: CookieNames,
): Promise<SessionUser> {
  request.sessionUser ??= await sessions.resolve(request.cookies[cookies.session]);
  if (!request.sessionUser) throw unauthorized("sign in first: the session is missing or has ended");
  return request.sessionUser;
}

/** The live staff session of the request, if any (a shop session is none). */
export async function staffSessionOf(
  request: FastifyRequest,
  sessions: Sessions,
  cookies: CookieNames,
): Promise<StaffSessionUser | undefined> {
  request.staffUser ??= await sessions.resolveStaff(request.cookies[cookies.session]);
  return request.staffUser;
}

/**
 * The live staff session of the request and who delivery-api says its person is now (name, role),
 * or undefined: no staff session, or one whose staff token delivery-api refuses (revoked, the
 * person disabled), which ends here. The BFF's own staff routes check a role with it: the page's
 * word is never taken for it.
 */
export async function liveStaffOf(
  request: FastifyRequest,
  options: { sessions: Sessions; ops: OpsClient; cookies: CookieNames },
): Promise<{ user: StaffSessionUser; actor: StaffActor } | undefined> {
  const user = await staffSessionOf(request, options.sessions, options.cookies);
  if (!user) return undefined;
  const actor = await options.ops.staffMe(user.staffToken);
  if (actor?.kind !== "staff" || actor.id !== user.staffId) {
    await options.sessions.end(user.sessionId);
    return undefined;
  }
  return { user, actor };
}

/** What the pages show of who is signed in, and where. */
async function signedInView(ops: OpsClient, user: SessionUser | { email: string; account_id: number }) {
  const accountId = "accountId" in user ? user.accountId : user.account_id;
  const account = await ops.getAccount(accountId);
  return {
    email: user.email,
    account: { id: account.id, company_name: account.company_name, environment: account.environment },
  };
}

/** Starts a session for a user who just proved who they are, and answers with it. */
export async function signIn(
  reply: FastifyReply,
  request: FastifyRequest,
  options: SessionRoutesOptions,
  user: { id: number; email: string; account_id: number; api_user_id: number },
) {
  const started = await options.sessions.start(user);
  setSessionCookie(reply, options.cookies, started.cookie, started.expiresAt);
  const csrf = csrfToken(request, reply, options.cookies, true);
  return { signed_in: true, csrf_token: csrf, user: await signedInView(options.ops, user) };
}

export async function sessionRoutes(app: FastifyInstance, options: SessionRoutesOptions) {
  const { sessions, people, ops, cookies } = options;

  app.get("/session", async (request, reply) => {
    reply.header("cache-control", "no-store");
    const csrf = csrfToken(request, reply, cookies);
    const user = await sessions.resolve(request.cookies[cookies.session]);
    if (!user) return { signed_in: false, csrf_token: csrf, user: null };
    return { signed_in: true, csrf_token: csrf, user: await signedInView(ops, user) };
  });

  app.post<{ Body: Static<typeof SignInBody> }>(
    "/session",
    { schema: { body: SignInBody } },
    async (request, reply) => {
      const user = await people.checkPassword(request.body.email.trim(), request.body.password, request.ip);
      reply.header("cache-control", "no-store");
      return signIn(reply, request, options, user).catch((error: unknown) => {
        // The user is gone from delivery-api (deleted since the invitation): no session for them.
        if (error instanceof HttpError && error.statusCode === 404)
          throw new HttpError(401, "e-mail or password is wrong");
        throw error;
      });
    },
  );

  app.delete("/session", async (request, reply) => {
    const user = await requireSession(request, sessions, cookies);
    await sessions.end(user.sessionId);
    clearSessionCookie(reply, cookies);
    return reply.code(204).send();
  });

  app.delete("/sessions", async (request, reply) => {
    const user = await requireSession(request, sessions, cookies);
    await sessions.endAll(user.userId);
    clearSessionCookie(reply, cookies);
    return reply.code(204).send();
  });
}
