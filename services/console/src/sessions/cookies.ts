/**
 * The console's two cookies and the CSRF check. Both cookies are HttpOnly, SameSite=Strict,
 * Secure and `__Host-` prefixed (so no subdomain can plant one), except with
 * CONSOLE_INSECURE_HTTP_FOR_LOCAL_DEV, for plain http://localhost.
 *
 * CSRF: double submit. The CSRF cookie holds a random token that the page reads from
 * GET /api/session and sends back in `X-CSRF-Token` on every change (any method but GET and
 * HEAD); a change whose header does not match the cookie is refused with a 403. Another site can
 * make the browser send the cookie, but can read neither it nor the answer that holds it.
 */

import { HttpError } from "@dos/service-kit";
import type { FastifyReply, FastifyRequest } from "fastify";
import { newToken, sameText } from "../secrets.ts";

export interface CookieNames {
  session: string;
  csrf: string;
  /** A staff sign-in's or enrolment's challenge: what binds its steps together (minutes long). */
  staffChallenge: string;
  secure: boolean;
}

export function cookieNames(insecureForLocalDev: boolean): CookieNames {
  const prefix = insecureForLocalDev ? "" : "__Host-";
  return {
    session: `${prefix}console_session`,
    csrf: `${prefix}console_csrf`,
    staffChallenge: `${prefix}console_staff_challenge`,
    secure: !insecureForLocalDev,
  };
}

const base = (names: CookieNames) => ({ path: "/", httpOnly: true, secure: names.secure, sameSite: "strict" }) as const;

export function setSessionCookie(reply: FastifyReply, names: CookieNames, value: string, expires: Date) {
  reply.setCookie(names.session, value, { ...base(names), expires });
}

export function clearSessionCookie(reply: FastifyReply, names: CookieNames) {
  reply.clearCookie(names.session, base(names));
}

export function setChallengeCookie(reply: FastifyReply, names: CookieNames, value: string, expires: Date) {
  reply.setCookie(names.staffChallenge, value, { ...base(names), expires });
}

export function clearChallengeCookie(reply: FastifyReply, names: CookieNames) {
  reply.clearCookie(names.staffChallenge, base(names));
}

/** The CSRF token of this browser, set when missing; a new one at every sign-in. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply, names: CookieNames, renew = false): string {
  const current = request.cookies[names.csrf];
  if (current && !renew && current.length <= 100) return current;
  const token = newToken();
  reply.setCookie(names.csrf, token, base(names));
  return token;
}

const CSRF_HEADER = "x-csrf-token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Refuses (403) a change whose X-CSRF-Token header does not match the CSRF cookie. */
export function checkCsrf(request: FastifyRequest, names: CookieNames): void {
  if (SAFE_METHODS.has(request.method)) return;
  const cookie = request.cookies[names.csrf];
  const header = request.headers[CSRF_HEADER];
  if (!cookie || typeof header !== "string" || !sameText(cookie, header)) {
    throw new HttpError(403, "X-CSRF-Token header is missing or does not match");
  }
}

/** An onRequest hook refusing a change whose X-CSRF-Token header does not match the CSRF cookie. */
export function csrfGuard(names: CookieNames) {
  return async (request: FastifyRequest) => checkCsrf(request, names);
}
