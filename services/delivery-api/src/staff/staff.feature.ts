/**
 * Staff identities assembled: the operator API's authentication (automation or a person's token,
 * with its login cache, failure budget and trusted tokens), the staff service and its routes.
 */
import type { AppMetrics, Logger } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { createAuthCache } from "../auth/auth-cache.ts";
import { createAuthGuard } from "../auth/auth-guard.ts";
import { createTrustedTokens } from "../auth/trusted-tokens.ts";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import { opsAuthHook, type StaffLogin } from "./ops-auth.ts";
import { staffOpsRoutes } from "./staff.ops-routes.ts";
import { listActiveStaffTokensAfter } from "./staff.repository.ts";
import { createStaffService } from "./staff.service.ts";

export interface StaffFeatureDeps {
  config: Config;
  db: Kysely<DB>;
  logger: Logger;
  metrics: AppMetrics;
  /** Called at each 429 of the operator API's failure budget (a metric shared with the client API's). */
  onRefusal: () => void;
}

export function createStaffFeature({ config, db, logger, metrics, onRefusal }: StaffFeatureDeps) {
  const cache = createAuthCache<StaffLogin>(config.API_AUTH_CACHE_MS);
  // A budget of its own: failures on the client API do not spend the operator API's, nor the reverse.
  const guard = createAuthGuard({
    quota: config.API_AUTH_FAILURE_QUOTA,
    windowSeconds: config.API_AUTH_FAILURE_WINDOW_SECONDS,
  });
  const trusted = createTrustedTokens({
    db,
    guard,
    intervalMs: config.API_TRUSTED_TOKENS_REFRESH_MS,
    logger: logger.child({ component: "trusted-staff-tokens" }),
    list: (afterId, limit) => listActiveStaffTokensAfter(db, afterId, limit),
  });
  const lookups = metrics.counter(
    "ops_staff_token_lookups_total",
    "Staff tokens looked up in PostgreSQL (a cache miss; refused floods never get here).",
  );
  const staff = createStaffService(db);

  return {
    /** The onRequest hook of the /ops/v1 context: sets request.actor. */
    authHook: opsAuthHook({
      automationToken: config.API_OPS_TOKEN,
      db,
      cache,
      guard,
      onLookup: () => lookups.inc(),
      onRefusal,
    }),
    /** Register inside the /ops/v1 context. */
    routes: (ops: FastifyInstance) =>
      staffOpsRoutes(ops, {
        staff,
        onAccessChange: () => cache.clear(),
        onTokenCreated: (sha256) => guard.trust([sha256]),
      }),
    start: () => trusted.start(),
    stop: () => trusted.stop(),
  };
}
