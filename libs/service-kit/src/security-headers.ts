/**
 * Headers every answer of every service carries, set in one place:
 * - `X-Content-Type-Options: nosniff` on every answer, so a browser never reads a JSON error or
 *   an uploaded image as a script or a page;
 * - on every HTML page, unless its route chose stricter ones: a Content-Security-Policy that
 *   runs only the service's own scripts and styles (no inline code, no third party) and lets no
 *   other site frame the page, and a Referrer-Policy that sends no URL (a tracking link's token
 *   is in the URL) to another site.
 */
import type { FastifyInstance } from "fastify";

/** The policy of a page served by a service: its own files only, never framed. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook("onSend", (_request, reply, payload, done) => {
    reply.header("x-content-type-options", "nosniff");
    const type = reply.getHeader("content-type");
    if (typeof type === "string" && type.startsWith("text/html")) {
      if (!reply.hasHeader("content-security-policy")) reply.header("content-security-policy", PAGE_CSP);
      if (!reply.hasHeader("referrer-policy")) reply.header("referrer-policy", "no-referrer");
    }
    done(null, payload);
  });
}
