/** The operator API's features, mounted by app.ts inside the /ops/v1 context (bearer guard first). */
import type { NatsConnection } from "@nats-io/nats-core";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { accountsOpsRoutes } from "../accounts/accounts.ops-routes.ts";
import { accountExists } from "../accounts/accounts.service.ts";
import { billingOpsRoutes } from "../billing/billing.ops-routes.ts";
import type { DB } from "../db/database.ts";
import { packageTypesOpsRoutes } from "../package-types/package-types.ops-routes.ts";
import { placesOpsRoutes } from "../places/places.ops-routes.ts";
import { tariffsOpsRoutes } from "../tariffs/tariffs.ops-routes.ts";
import type { WebhooksBusOptions } from "../webhooks/webhooks.bus.ts";
import { webhooksOpsRoutes } from "../webhooks/webhooks.ops-routes.ts";
import { zonesOpsRoutes } from "../zones/zones.ops-routes.ts";

export interface OpsRoutesOptions {
  db: Kysely<DB>;
  /** Called after a token is revoked or an account changed: cached client logins are forgotten. */
  onAccessChange: () => void;
  /**
   * Called as a change to places, zones or package types is answered: this replica's cached
   * catalogue is forgotten before the operator learns the change is done (other replicas forget
   * theirs when PostgreSQL's notification arrives).
   */
  onCatalogueChange: () => void;
  /** Tariffs live in the pricing service: their routes forward over NATS. */
  pricing: { nc: NatsConnection; namespace: string; timeoutMs: number };
  /** Webhook endpoints live in webhook-dispatcher: their routes forward over NATS. */
  webhooks: WebhooksBusOptions;
}

export async function opsRoutes(ops: FastifyInstance, options: OpsRoutesOptions) {
  const { db } = options;
  // Pricing and webhook-dispatcher know no accounts: an unknown one is refused here, as on every
  // other operator route.
  const exists = (accountId: number) => accountExists(db, accountId);
  await ops.register(accountsOpsRoutes, { db, onAccessChange: options.onAccessChange });
  await ops.register(async (catalogue) => {
    catalogue.addHook("onSend", async (request, _reply, payload) => {
      if (request.method !== "GET" && request.method !== "HEAD") options.onCatalogueChange();
      return payload;
    });
    await catalogue.register(placesOpsRoutes, { db });
    await catalogue.register(packageTypesOpsRoutes, { db });
    await catalogue.register(zonesOpsRoutes, { db });
  });
  await ops.register(billingOpsRoutes, { db });
  await ops.register(tariffsOpsRoutes, { ...options.pricing, accountExists: exists });
  await ops.register(webhooksOpsRoutes, { ...options.webhooks, accountExists: exists });
}
