/**
 * Builds the console from its dependencies; never listens (main.ts does, tests use inject).
 * A backend-for-frontend: it serves the built pages, holds the people's credentials and
 * sessions (/api), forwards the client API as the signed-in user (/api/v2), and has operator
 * routes (/ops/console/v1: invitations) on its internal listener only.
 */
import { SERVICE_NAMES } from "@dos/contracts";
import { type BuiltService, bearerAuthHook, createHttpApp, type ServiceDeps } from "@dos/service-kit";
import fastifyCookie from "@fastify/cookie";
import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { accountRoutes } from "./account/account.routes.ts";
import { billingRoutes } from "./billing/billing.routes.ts";
import { clientApiRoutes } from "./client-api/client-api.routes.ts";
import type { Config } from "./config.ts";
import type { DB } from "./db/database.ts";
import { createOpsClient } from "./delivery-api/ops-client.ts";
import { liveMetrics, liveRoutes } from "./live/live.routes.ts";
import { createLivePositions } from "./live/live-positions.ts";
import { createLiveStreams } from "./live/live-streams.ts";
import { mailerFromConfig } from "./mail/mailer.ts";
import { mapRoutes, mapStyleRoutes } from "./map/map.routes.ts";
import { operatorApiRoutes } from "./operator-api/operator-api.routes.ts";
import { peopleOpsRoutes, peopleRoutes, staffInvitationRoutes } from "./people/people.routes.ts";
import { createPeople } from "./people/people.service.ts";
import { createSealer } from "./secrets.ts";
import { cookieNames, csrfGuard } from "./sessions/cookies.ts";
import { sessionRoutes, staffSessionOf } from "./sessions/sessions.routes.ts";
import { createSessions } from "./sessions/sessions.service.ts";
import { createPasskeys } from "./staff/passkeys.ts";
import { staffAdminRoutes, staffOpsRoutes, staffRoutes } from "./staff/staff.routes.ts";
import { createStaffCredentials } from "./staff/staff.service.ts";
import { systemRoutes } from "./system/system.routes.ts";
import { createSystemMonitor } from "./system/system.service.ts";
import { pagesRoutes } from "./web/pages.routes.ts";

/** The BFF takes small JSON bodies only (a delivery with its packages is a few kilobytes). */
const BODY_LIMIT = 64 * 1024;

export async function buildApp(deps: ServiceDeps<Config>): Promise<BuiltService> {
  const { config, logger } = deps;
  const db = deps.database.db as Kysely<DB>;
  const { app, metrics } = createHttpApp({
    service: SERVICE_NAMES.console,
    logger,
    lifecycle: deps.lifecycle,
    timeouts: config,
    trustedProxies: config.TRUSTED_PROXIES,
    checks: { nats: deps.nats.check },
    database: deps.database,
    bodyLimit: BODY_LIMIT,
    // The console's own operator routes only: /ops/v1 is the staff's operator API, forwarded.
    internalPrefix: "/ops/console",
  });
  await app.register(fastifyCookie);

  const ops = createOpsClient({
    baseUrl: config.CONSOLE_OPS_URL,
    token: config.CONSOLE_OPS_TOKEN,
    timeoutMs: config.CONSOLE_API_TIMEOUT_MS,
  });
  const cookies = cookieNames(config.CONSOLE_INSECURE_HTTP_FOR_LOCAL_DEV);
  const sealer = createSealer(config.CONSOLE_SECRET_KEY);
  const sessions = createSessions({ db, ops, sealer, config, logger: logger.child({ component: "sessions" }) });
  const mailer = mailerFromConfig(config, logger);
  const people = createPeople({ db, ops, mailer, config });
  const staff = createStaffCredentials({
    db,
    ops,
    mailer,
    config,
    sealer,
    passkeys: createPasskeys({ rpId: config.CONSOLE_WEBAUTHN_RP_ID, origin: config.CONSOLE_WEBAUTHN_ORIGIN }),
  });
  const routeOptions = { sessions, people, ops, cookies };
  const monitor = createSystemMonitor({
    targets: [
      { name: "delivery-api", url: config.CONSOLE_SYSTEM_DELIVERY_API_URL },
      { name: "geo-ingest", url: config.CONSOLE_SYSTEM_GEO_INGEST_URL },
      { name: "pricing", url: config.CONSOLE_SYSTEM_PRICING_URL },
      { name: "webhook-dispatcher", url: config.CONSOLE_SYSTEM_WEBHOOK_DISPATCHER_URL },
    ],
    timeoutMs: config.CONSOLE_SYSTEM_TIMEOUT_MS,
    sampleMs: config.CONSOLE_SYSTEM_SAMPLE_SECONDS * 1000,
    // This replica's own probe, run in process.
    selfReadiness: async () => {
      const answer = await app.inject({ method: "GET", url: "/readyz" });
      return { status: answer.statusCode, body: answer.body };
    },
  });

  // The live map: one subscription to the latest positions for every stream of this process.
  const live = liveMetrics(metrics);
  const positions = createLivePositions({
    nc: deps.nats.nc,
    namespace: config.NATS_NAMESPACE,
    logger: logger.child({ component: "live" }),
    onReceived: live.onReceived,
  });
  const liveStreams = createLiveStreams({
    positions,
    // delivery-api's largest page: a fleet of 2,000 in one read.
    readPage: (staffToken, after) => ops.fleetLive(staffToken, after, 5000),
    sessions,
    snapshotMs: config.CONSOLE_LIVE_SNAPSHOT_SECONDS * 1000,
    // A quiet stream must not look idle to the server (HTTP_IDLE_TIMEOUT_MS closes those).
    heartbeatMs: Math.min(15_000, Math.floor(config.HTTP_IDLE_TIMEOUT_MS / 3)),
    perPerson: config.CONSOLE_LIVE_STREAMS_PER_PERSON,
    total: config.CONSOLE_LIVE_STREAMS_TOTAL,
    logger: logger.child({ component: "live" }),
    onWritten: live.onWritten,
    onSuperseded: live.onSuperseded,
  });
  sessions.onEnded(() => liveStreams.sessionsEnded());
  live.watch(liveStreams);

  await app.register(
    async (api) => {
      api.addHook("onRequest", csrfGuard(cookies));
      await api.register(sessionRoutes, routeOptions);
      await api.register(staffRoutes, { staff, sessions, ops, cookies });
      await api.register(staffAdminRoutes, { staff, sessions, ops, cookies });
      await api.register(systemRoutes, { monitor, sessions, ops, cookies });
      await api.register(liveRoutes, { streams: liveStreams, sessions, cookies });
      await api.register(peopleRoutes, routeOptions);
      await api.register(staffInvitationRoutes, routeOptions);
      await api.register(accountRoutes, { db, ops, sessions, cookies });
      await api.register(billingRoutes, { ops, sessions, cookies });
      await api.register(clientApiRoutes, {
        apiUrl: config.CONSOLE_API_URL,
        timeoutMs: config.CONSOLE_API_TIMEOUT_MS,
        sessions,
        cookies,
      });
      await api.register(mapRoutes, {
        apiUrl: config.CONSOLE_API_URL,
        timeoutMs: config.CONSOLE_API_TIMEOUT_MS,
        styleUrl: config.CONSOLE_MAP_STYLE_URL,
        sessions,
        cookies,
      });
    },
    { prefix: "/api" },
  );
  await app.register(operatorApiRoutes, {
    opsUrl: config.CONSOLE_OPS_URL,
    timeoutMs: config.CONSOLE_API_TIMEOUT_MS,
    sessions,
    cookies,
  });
  await app.register(mapStyleRoutes);
  await app.register(
    async (opsApp) => {
      opsApp.addHook("onRequest", bearerAuthHook(config.CONSOLE_OPS_TOKEN));
      await opsApp.register(peopleOpsRoutes, { people });
      await opsApp.register(staffOpsRoutes, { staff });
    },
    { prefix: "/ops/console/v1" },
  );
  await app.register(pagesRoutes, {
    mapStyleUrl: config.CONSOLE_MAP_STYLE_URL,
    isStaff: async (request: FastifyRequest) => (await staffSessionOf(request, sessions, cookies)) !== undefined,
  });

  return {
    app,
    internalPort: config.CONSOLE_OPS_PORT,
    async start() {
      sessions.startSweeping();
    },
    async stop() {
      await sessions.stopSweeping();
    },
  };
}
