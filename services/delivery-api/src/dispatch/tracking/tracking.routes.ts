/**
 * Public routes (no credentials; the unguessable token or media id is the key):
 * `GET /track/{token}` the page, `/track/{token}/state` its JSON, `/track/{token}/events` a
 * server-sent event stream of that JSON, and `GET /media/{id}` the proof images.
 *
 * The streams are fed by tracking-streams.ts: one batch read per interval for all open pages, from
 * PostgreSQL, which keeps every replica right whichever one took the position.
 */
import { HttpError } from "@dos/service-kit";
import type { FastifyInstance, FastifyReply } from "fastify";
import { TrackingLinkExpired, type TrackingService } from "./tracking.service.ts";
import { TRACKING_CSS, TRACKING_HTML, TRACKING_JS, trackingErrorHtml } from "./tracking-page.ts";
import type { TrackingStreams } from "./tracking-streams.ts";

export interface TrackingRoutesOptions {
  tracking: TrackingService;
  streams: TrackingStreams;
}

/** The access line's and trace's URL: a tracking token or media id is the key to what it opens. */
export function urlWithoutSecrets(url: string): string {
  return url.replace(/^\/(track|media)\/(?!assets\/)[^/?]+/, "/$1/[redacted]");
}

export async function trackingRoutes(app: FastifyInstance, options: TrackingRoutesOptions) {
  const { tracking, streams } = options;
  // Before the server closes: an open stream would otherwise hold the shutdown until its lifetime ends.
  app.addHook("preClose", async () => streams.close());

  // The kit adds nosniff to every answer, and to HTML its page policy (PAGE_CSP: own files
  // only, never framed) and no-referrer, which keeps the token in the URL from other sites.
  const page = (reply: FastifyReply, type: string, body: string) => reply.header("content-type", type).send(body);

  app.get("/track/assets/tracking.js", (_request, reply) =>
    page(reply.header("cache-control", "public, max-age=300"), "text/javascript; charset=utf-8", TRACKING_JS),
  );
  app.get("/track/assets/tracking.css", (_request, reply) =>
    page(reply.header("cache-control", "public, max-age=300"), "text/css; charset=utf-8", TRACKING_CSS),
  );

  app.get<{ Params: { token: string } }>("/track/:token", async (request, reply) => {
    reply.header("cache-control", "no-store");
    try {
      await tracking.state(request.params.token);
    } catch (error) {
      // An unknown or not yet started link is a 404, an expired one a 410: said as a page.
      if (error instanceof HttpError && (error.statusCode === 404 || error.statusCode === 410)) {
        const html = trackingErrorHtml(error.statusCode, error instanceof TrackingLinkExpired && error.cancelled);
        return page(reply.code(error.statusCode), "text/html; charset=utf-8", html);
      }
      throw error;
    }
    return page(reply, "text/html; charset=utf-8", TRACKING_HTML);
  });

  app.get<{ Params: { token: string } }>("/track/:token/state", async (request, reply) => {
    reply.header("cache-control", "no-store");
    return tracking.state(request.params.token);
  });

  app.get<{ Params: { token: string } }>("/track/:token/events", async (request, reply) => {
    await streams.open(request.params.token, request.ip, () => {
      reply.hijack();
      return reply.raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
    });
  });

  app.get<{ Params: { id: string } }>("/media/:id", async (request, reply) => {
    const media = await tracking.media(request.params.id);
    return reply
      .header("content-type", media.content_type)
      .header("cache-control", "public, max-age=31536000, immutable")
      .header("content-security-policy", "default-src 'none'")
      .send(media.bytes);
  });
}
