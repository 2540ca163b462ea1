/**
 * Public routes (no credentials; the unguessable token or media id is the key):
 * `GET /track/{token}` the page, `/track/{token}/state` its JSON, `/track/{token}/events` a
 * server-sent event stream of that JSON, and `GET /media/{id}` the proof images.
 *
 * The stream re-reads the state every API_TRACKING_PUSH_MS and sends it when it changed. Reading
 * from PostgreSQL keeps every replica right whichever one took the position, at the price of one
 * small query per open page and interval.
 */
import { HttpError } from "@dos/service-kit";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { TrackingService } from "./tracking.service.ts";
import { TRACKING_CSS, TRACKING_HTML, TRACKING_JS, trackingErrorHtml } from "./tracking-page.ts";

const HEARTBEAT_MS = 15_000;

export interface TrackingRoutesOptions {
  tracking: TrackingService;
  pushMs: number;
}

export async function trackingRoutes(app: FastifyInstance, options: TrackingRoutesOptions) {
  const { tracking } = options;
  const streams = new Set<() => void>();
  app.addHook("onClose", async () => {
    for (const end of streams) end();
  });

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
        return page(reply.code(error.statusCode), "text/html; charset=utf-8", trackingErrorHtml(error.statusCode));
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
    const token = request.params.token;
    const first = await tracking.state(token);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    let last = "";
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    let lastWrite = Date.now();
    const send = (event: string, data: string) => {
      raw.write(`event: ${event}\ndata: ${data}\n\n`);
      lastWrite = Date.now();
    };
    const end = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      streams.delete(end);
      raw.end();
    };
    streams.add(end);
    raw.on("close", end);
    const tick = async () => {
      if (closed) return;
      try {
        const text = JSON.stringify(await tracking.state(token));
        if (text !== last) {
          send("state", text);
          last = text;
        } else if (Date.now() - lastWrite >= HEARTBEAT_MS) {
          raw.write(": keep-alive\n\n");
          lastWrite = Date.now();
        }
      } catch (error) {
        if (error instanceof HttpError && error.statusCode === 410) {
          send("gone", "{}");
          return end();
        }
        request.log.warn({ err: error }, "tracking stream could not read the state; retrying");
      }
      if (!closed) timer = setTimeout(tick, options.pushMs);
    };
    last = JSON.stringify(first);
    send("state", last);
    timer = setTimeout(tick, options.pushMs);
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
