/**
 * Builds delivery-api from its dependencies; never listens (main.ts does, tests use inject).
 * Three surfaces: the client API (/api/v2, X-User-Email + X-User-Token), the operator API
 * (/ops/v1, on the internal listener only: the automation token or a person's staff token, each
 * route's role checked, every change audited) and the retired /api/v1.
 */
import { SERVICE_NAMES } from "@dos/contracts";
import { type BuiltService, createHttpApp, runAsTenant, type ServiceDeps } from "@dos/service-kit";
import type { Kysely } from "kysely";
import { registerAuditHooks } from "./audit/audit.hooks.ts";
import { auditOpsRoutes } from "./audit/audit.ops-routes.ts";
import { createAuditService } from "./audit/audit.service.ts";
import { createAuthCache } from "./auth/auth-cache.ts";
import { createAuthGuard } from "./auth/auth-guard.ts";
import { clientAuthHook } from "./auth/client-auth.ts";
import { createTrustedTokens } from "./auth/trusted-tokens.ts";
import type { Config } from "./config.ts";
import type { DB } from "./db/database.ts";
import { createDeliveriesFeature } from "./deliveries/deliveries.feature.ts";
import { createDispatchFeature } from "./dispatch/dispatch.feature.ts";
import { urlWithoutSecrets } from "./dispatch/tracking/tracking.routes.ts";
import { createHousekeeping } from "./housekeeping/housekeeping.ts";
import { openApiPlugin, opsOpenApiRoute } from "./openapi/openapi.plugin.ts";
import { opsRoutes } from "./ops/ops.routes.ts";
import { createOpsRouteRegistry } from "./ops/ops-route-registry.ts";
import { packageTypesRoutes } from "./package-types/package-types.routes.ts";
import { createTariffReplica } from "./pricing/tariff-replica.ts";
import { createAccountLimiter } from "./rate-limits/account-limiter.ts";
import { accountRateLimitHook } from "./rate-limits/rate-limit.hook.ts";
import { opsAccessHook } from "./staff/ops-access.ts";
import { createStaffFeature } from "./staff/staff.feature.ts";
import { v1RetiredRoutes } from "./versions/v1-retired.routes.ts";
import { webhooksRoutes } from "./webhooks/webhooks.routes.ts";

/**
 * How delivery-api connects to NATS (main.ts boots with it, tests connect with it): the outbox
 * relays publish on a connection of their own, so that a stream slow to store never holds back
 * the quotes a create waits on (libs/service-kit nats.ts, NatsHandle.publisher).
 */
export const NATS_CONNECTION = { separatePublisher: true } as const;

const OPS_PREFIX = "/ops/v1";

export async function buildApp(deps: ServiceDeps<Config>): Promise<BuiltService> {
  const { config } = deps;
  const db = deps.database.db as Kysely<DB>;
  const { app, metrics } = createHttpApp({
    service: SERVICE_NAMES.deliveryApi,
    logger: deps.logger,
    lifecycle: deps.lifecycle,
    timeouts: deps.config,
    checks: { nats: deps.nats.check },
    database: deps.database,
    bodyLimit: config.API_BODY_LIMIT_BYTES,
    // The operator API answers only on API_OPS_PORT, which no public route reaches.
    internalPrefix: "/ops",
    loggedUrl: urlWithoutSecrets,
    trustedProxies: config.TRUSTED_PROXIES,
  });

  const authCache = createAuthCache(config.API_AUTH_CACHE_MS);
  const authGuard = createAuthGuard({
    quota: config.API_AUTH_FAILURE_QUOTA,
    windowSeconds: config.API_AUTH_FAILURE_WINDOW_SECONDS,
  });
  // Holders of active tokens are never held back by others' failures (auth-guard.ts).
  const trustedTokens = createTrustedTokens({
    db,
    guard: authGuard,
    intervalMs: config.API_TRUSTED_TOKENS_REFRESH_MS,
    logger: deps.logger.child({ component: "trusted-tokens" }),
  });
  const tokenLookups = metrics.counter(
    "api_token_lookups_total",
    "Client API tokens looked up in PostgreSQL (a cache miss; refused floods never get here).",
  );
  const rateLimited = metrics.counter("api_rate_limited_total", "Client API requests refused with 429.", ["limit"]);
  const accountLimiter = createAccountLimiter({
    nc: deps.nats.nc,
    namespace: config.NATS_NAMESPACE,
    logger: deps.logger.child({ component: "rate-limits" }),
    timeoutMs: config.API_RATE_LIMIT_TIMEOUT_MS,
  });
  await app.register(v1RetiredRoutes);
  // What creates are priced from while NATS is down (docs/spec-decisions.md).
  const tariffReplica = createTariffReplica({
    nc: deps.nats.nc,
    namespace: config.NATS_NAMESPACE,
    logger: deps.logger.child({ component: "tariff-replica" }),
  });
  const deliveries = createDeliveriesFeature({
    config,
    db,
    database: deps.database,
    nats: deps.nats,
    logger: deps.logger,
    metrics,
    tariffReplica,
  });
  const dispatch = createDispatchFeature({
    config,
    db,
    database: deps.database,
    nats: deps.nats,
    logger: deps.logger,
    deliveries: deliveries.dispatchPort,
  });
  // Public: the tracking page behind tracking_url, and proof images.
  await app.register(dispatch.publicRoutes);
  // Public, and before the client and operator routes so that the generators see them.
  await app.register(openApiPlugin);

  // Client API: authenticated before the body is even parsed, so a stranger learns nothing.
  await app.register(
    async (client) => {
      client.addHook(
        "onRequest",
        clientAuthHook({
          db,
          cache: authCache,
          guard: authGuard,
          onLookup: () => tokenLookups.inc(),
          onRefusal: () => rateLimited.inc({ limit: "failed_auth" }),
        }),
      );
      if (config.API_RATE_LIMIT_ENABLED) {
        const defaultPolicy = {
          quota: config.API_RATE_LIMIT_QUOTA,
          windowSeconds: config.API_RATE_LIMIT_WINDOW_SECONDS,
        };
        client.addHook(
          "onRequest",
          accountRateLimitHook(accountLimiter, defaultPolicy, () => rateLimited.inc({ limit: "account" })),
        );
      }
      // From here on the account's queries take their turn among other accounts' for the pool's
      // connections (the kit's fair-connections.ts): a burst queues behind itself, not others.
      client.addHook("preHandler", (request, _reply, done) => runAsTenant(`account:${request.account.id}`, done));
      await client.register(packageTypesRoutes, { db });
      await client.register(deliveries.clientRoutes);
      await client.register(webhooksRoutes, { nc: deps.nats.nc, namespace: config.NATS_NAMESPACE });
      client.setNotFoundHandler((request, reply) => {
        reply.code(404).send({ errors: [`route ${request.method} ${request.url.split("?")[0]} not found`] });
      });
    },
    { prefix: "/api/v2" },
  );

  // Operator API: what the spec leaves to "the operator's web interface". Who calls (automation or
  // a person), whether their role allows the route (one table, ops-access.ts), and the audit log
  // of every change, before any route runs.
  const staff = createStaffFeature({
    config,
    db,
    logger: deps.logger,
    metrics,
    onRefusal: () => rateLimited.inc({ limit: "ops_failed_auth" }),
  });
  const audit = createAuditService(db);
  const opsRouteRegistry = createOpsRouteRegistry();
  app.decorate("opsRouteRegistry", opsRouteRegistry);
  await app.register(
    async (ops) => {
      opsRouteRegistry.watch(ops, OPS_PREFIX);
      ops.addHook("onRequest", staff.authHook);
      ops.addHook("onRequest", opsAccessHook(OPS_PREFIX));
      registerAuditHooks(ops, {
        audit,
        prefix: OPS_PREFIX,
        hasGet: (route) => opsRouteRegistry.hasGet(route),
        logger: deps.logger.child({ component: "audit" }),
      });
      await ops.register(opsOpenApiRoute);
      await ops.register(staff.routes);
      await ops.register(auditOpsRoutes, { audit });
      await ops.register(opsRoutes, {
        db,
        onAccessChange: () => authCache.clear(),
        onCatalogueChange: () => deliveries.catalogueCache.clear(),
        pricing: { nc: deps.nats.nc, namespace: config.NATS_NAMESPACE, timeoutMs: config.API_PRICING_TIMEOUT_MS },
        webhooks: { nc: deps.nats.nc, namespace: config.NATS_NAMESPACE },
      });
      await ops.register(deliveries.opsRoutes);
      await ops.register(dispatch.opsRoutes);
    },
    { prefix: OPS_PREFIX },
  );

  const housekeeping = createHousekeeping({
    db,
    logger: deps.logger.child({ component: "housekeeping" }),
    metrics,
    outboxRetentionMs: config.API_OUTBOX_RETENTION_HOURS * 3_600_000,
    auditRetentionMs: config.API_AUDIT_RETENTION_DAYS * 86_400_000,
    intervalMs: config.API_HOUSEKEEPING_INTERVAL_MS,
  });

  // Background work (relays, consumers, simulator, housekeeping) runs once the app listens, and
  // stops after the HTTP server closed.
  return {
    app,
    internalPort: config.API_OPS_PORT,
    start: async () => {
      tariffReplica.start();
      if (config.API_RATE_LIMIT_ENABLED) accountLimiter.start();
      await trustedTokens.start();
      await staff.start();
      deliveries.catalogueCache.start();
      await deliveries.relay.start();
      dispatch.start();
      housekeeping.start();
    },
    stop: async () => {
      await housekeeping.stop();
      await dispatch.stop();
      await deliveries.relay.stop();
      await deliveries.catalogueCache.stop();
      await tariffReplica.stop();
      await accountLimiter.stop();
      await trustedTokens.stop();
      await staff.stop();
    },
  };
}
