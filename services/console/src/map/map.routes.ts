/**
 * What the delivery page's map needs from the BFF:
 * - `GET /map/style.json`: the offline map style (a plain background; the delivery's points and
 *   the courier are drawn by the page), used when `CONSOLE_MAP_STYLE_URL` names no provider, so
 *   `npm start` and the tests load no third-party tile;
 * - `GET /api/map`: the style URL the page loads (`CONSOLE_MAP_STYLE_URL`);
 * - `GET /api/deliveries/:id/live`: while a delivery is under way, its courier's position and its
 *   tasks' points, read from what its tracking page reads (delivery-api's `/track/{token}/state`),
 *   for the session's own account only: the delivery is first read through the client API as the
 *   signed-in person, so another account's delivery is the client API's 404.
 */
import { HttpError, notFound, unavailable } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { CookieNames } from "../sessions/cookies.ts";
import { requireSession } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";

/** The style served when no provider is configured: no source, no tile, no glyph. */
const OFFLINE_STYLE = {
  version: 8,
  name: "console offline",
  sources: {},
  layers: [{ id: "background", type: "background", paint: { "background-color": "#e8eef3" } }],
} as const;

interface Point {
  latitude: number;
  longitude: number;
}
interface TrackingState {
  status: string;
  task: "pickup" | "dropoff";
  destination: Point | null;
  messenger: (Point & { recorded_at: string }) | null;
}
interface TaskLink {
  tracking_url: string | null;
}

export interface MapRoutesOptions {
  apiUrl: string;
  timeoutMs: number;
  styleUrl: string;
  sessions: Sessions;
  cookies: CookieNames;
}

export async function mapStyleRoutes(app: FastifyInstance) {
  app.get("/map/style.json", async (_request, reply) =>
    reply.header("cache-control", "public, max-age=300").send(OFFLINE_STYLE),
  );
}

export async function mapRoutes(app: FastifyInstance, options: MapRoutesOptions) {
  const get = async (path: string, headers: Record<string, string> = {}) => {
    try {
      return await fetch(new URL(path, options.apiUrl), { headers, signal: AbortSignal.timeout(options.timeoutMs) });
    } catch {
      throw unavailable("delivery-api is not answering, retry later");
    }
  };

  app.get("/map", async () => ({ style_url: options.styleUrl }));

  app.get<{ Params: { id: string } }>("/deliveries/:id/live", async (request, reply) => {
    reply.header("cache-control", "no-store");
    const user = await requireSession(request, options.sessions, options.cookies);
    const id = request.params.id;
    if (!/^[1-9]\d{0,14}$/.test(id)) throw notFound(`delivery ${id.slice(0, 20)}`);
    const answer = await get(`/api/v2/deliveries/${id}`, { "x-user-email": user.email, "x-user-token": user.apiToken });
    if (answer.status === 404) throw notFound(`delivery ${id}`);
    if (!answer.ok) throw new HttpError(502, `delivery-api answered ${answer.status}`);
    const delivery = (await answer.json()) as { status: string; pickup: TaskLink | null; dropoff: TaskLink | null };

    // A task's tracking link exists once its task started (the courier is on the way).
    const tokens = [delivery.pickup, delivery.dropoff]
      .map((task) => task?.tracking_url?.split("/").pop())
      .filter((token): token is string => token !== undefined && /^[A-Za-z0-9_-]{16,64}$/.test(token));
    const states: TrackingState[] = [];
    for (const token of tokens) {
      const state = await get(`/track/${token}/state`);
      // 404 before the task starts, 410 once its link expired: nothing to show for that task.
      if (state.ok) states.push((await state.json()) as TrackingState);
    }
    const points = states.flatMap((s) => (s.destination ? [{ task: s.task, ...s.destination }] : []));
    const courier = states.find((s) => s.messenger !== null)?.messenger ?? null;
    return { status: delivery.status, courier, points };
  });
}
