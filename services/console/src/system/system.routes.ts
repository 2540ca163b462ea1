/**
 * GET /api/staff/system: the System page's reading of the services (system.service.ts), for a
 * live staff session only: anyone else gets the 404 of a route that does not exist, like the
 * other staff routes that tell a shop user nothing. The session is checked with delivery-api at
 * each call (a person disabled since signing in is out at once), except while delivery-api does
 * not answer: then the console's own session vouches for the person, since that is when the page
 * is needed most (it shows delivery-api not answering).
 */
import { HttpError } from "@dos/service-kit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { OpsClient } from "../delivery-api/ops-client.ts";
import type { CookieNames } from "../sessions/cookies.ts";
import { liveStaffOf, staffSessionOf } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";
import type { SystemMonitor } from "./system.service.ts";

export interface SystemRoutesOptions {
  monitor: SystemMonitor;
  sessions: Sessions;
  ops: OpsClient;
  cookies: CookieNames;
}

/** Whether the request is a staff person's, as delivery-api says, or as the console's session says while delivery-api does not answer. */
async function isStaff(request: FastifyRequest, options: SystemRoutesOptions): Promise<boolean> {
  try {
    return (await liveStaffOf(request, options)) !== undefined;
  } catch (error) {
    if (error instanceof HttpError && error.statusCode === 503) {
      return (await staffSessionOf(request, options.sessions, options.cookies)) !== undefined;
    }
    throw error;
  }
}

export async function systemRoutes(app: FastifyInstance, options: SystemRoutesOptions) {
  app.get("/staff/system", async (request, reply) => {
    if (!(await isStaff(request, options))) {
      return reply.code(404).send({ errors: [`route GET ${request.url.split("?")[0]} not found`] });
    }
    reply.header("cache-control", "no-store");
    return options.monitor.read();
  });
}
