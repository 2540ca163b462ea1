/**
 * GET /api/staff/live: the live map's event stream (live-streams.ts), for a staff session only;
 * anyone else gets the 404 of a route that does not exist, like the other staff routes.
 */
import type { AppMetrics } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { CookieNames } from "../sessions/cookies.ts";
import { staffSessionOf } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";
import type { LiveStreams } from "./live-streams.ts";

export interface LiveRoutesOptions {
  streams: LiveStreams;
  sessions: Sessions;
  cookies: CookieNames;
}

export async function liveRoutes(app: FastifyInstance, options: LiveRoutesOptions) {
  const { streams, sessions, cookies } = options;
  // Before the server closes: an open stream would otherwise hold the shutdown until the client left.
  app.addHook("preClose", async () => streams.close());

  app.get("/staff/live", async (request, reply) => {
    const user = await staffSessionOf(request, sessions, cookies);
    if (!user) return reply.code(404).send({ errors: [`route GET ${request.url.split("?")[0]} not found`] });
    await streams.open(user, () => {
      reply.hijack();
      return reply.raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-content-type-options": "nosniff",
        // Proxies (nginx) would otherwise hold the events back until a buffer fills.
        "x-accel-buffering": "no",
      });
    });
  });
}

/** The live map's counters and gauges in the console's /metrics; `watch` adds the streams' gauges once they exist. */
export function liveMetrics(metrics: AppMetrics) {
  const written = metrics.counter("console_live_stream_written_bytes_total", "Bytes written to live map streams.");
  const received = metrics.counter("console_live_positions_received_total", "Positions taken from the bus.");
  const superseded = metrics.counter(
    "console_live_positions_superseded_total",
    "Positions a live map stream skipped: replaced unwritten by a newer one of the vehicle, or by a snapshot, while its socket did not drain.",
  );
  return {
    onWritten: (bytes: number) => written.inc(bytes),
    onSuperseded: (positions: number) => superseded.inc(positions),
    onReceived: () => received.inc(),
    watch(streams: LiveStreams) {
      metrics.gauge("console_live_streams", "Live map streams open on this replica.", [], (gauge) => {
        gauge.set(streams.stats().streams);
      });
      metrics.gauge(
        "console_live_stream_buffered_bytes",
        "Bytes the live map streams' sockets hold unwritten (a browser not reading).",
        [],
        (gauge) => gauge.set(streams.stats().buffered),
      );
      metrics.gauge(
        "console_live_stream_pending_positions",
        "Positions waiting for a live map stream whose socket does not drain (the latest per vehicle).",
        [],
        (gauge) => gauge.set(streams.stats().pending),
      );
    },
  };
}
