/**
 * GET /api/staff/system: the System page's reading of the services (system.service.ts), for a
 * live staff session only: anyone else gets the 404 of a route that does not exist, like the
 * other staff routes that tell a shop user nothing.
 */
import type { FastifyInstance } from "fastify";
import type { OpsClient } from "../delivery-api/ops-client.ts";
import type { CookieNames } from "../sessions/cookies.ts";
import { liveStaffOf } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";
import type { SystemMonitor } from "./system.service.ts";

export interface SystemRoutesOptions {
  monitor: SystemMonitor;
  sessions: Sessions;
  ops: OpsClient;
  cookies: CookieNames;
}

export async function systemRoutes(app: FastifyInstance, options: SystemRoutesOptions) {
  app.get("/staff/system", async (request, reply) => {
    const staff = await liveStaffOf(request, options);
    if (!staff) return reply.code(404).send({ errors: [`route GET ${request.url.split("?")[0]} not found`] });
    reply.header("cache-control", "no-store");
    return options.monitor.read();
  });
}
