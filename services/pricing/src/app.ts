/** Builds pricing from its dependencies; never listens (main.ts does, tests use inject). */
import { natsNames, SERVICE_NAMES } from "@dos/contracts";
import { type BuiltService, createHttpApp, type ServiceDeps } from "@dos/service-kit";
import type { Kysely } from "kysely";
import { type PricingBus, startPricingBus } from "./bus/pricing-service.ts";
import type { Config } from "./config.ts";
import type { DB } from "./db/database.ts";
import { createQuoteHandler } from "./quotes/quotes.handler.ts";
import { createTariffCache } from "./tariffs/tariff-cache.ts";
import { createTariffsBucketWriter } from "./tariffs/tariffs.bucket.ts";
import { listTariffsByAccount, toTariffVersion } from "./tariffs/tariffs.repository.ts";
import { createTariffsService } from "./tariffs/tariffs.service.ts";

export async function buildApp(deps: ServiceDeps<Config>): Promise<BuiltService> {
  const { config, logger, nats } = deps;
  let bus: PricingBus | undefined;
  const { app, metrics } = createHttpApp({
    service: SERVICE_NAMES.pricing,
    logger,
    lifecycle: deps.lifecycle,
    timeouts: deps.config,
    trustedProxies: deps.config.TRUSTED_PROXIES,
    checks: {
      nats: nats.check,
      // Not ready until start() registered the endpoints, nor after the framework closed them.
      quote_endpoint: async () => {
        if (!bus || bus.service.isStopped) throw new Error("not serving quotes");
      },
    },
    database: deps.database,
  });
  const db = deps.database.db as Kysely<DB>;
  const names = natsNames(config.NATS_NAMESPACE);
  const cache = createTariffCache({
    ttlMs: config.PRICING_TARIFF_CACHE_TTL_MS,
    maxAccounts: config.PRICING_TARIFF_CACHE_MAX_ACCOUNTS,
    load: async (accountId) => (await listTariffsByAccount(db, accountId)).map(toTariffVersion),
  });
  const bucket = createTariffsBucketWriter({ db, nc: nats.nc, names, logger });
  const tariffs = createTariffsService({ db, nc: nats.nc, names, cache, bucket });
  const quote = createQuoteHandler({ cache, metrics });

  return {
    app,
    async start() {
      bus ??= await startPricingBus({ nc: nats.nc, names, logger, cache, quote, tariffs });
      // Refills the bucket delivery-api prices from during a NATS outage, should it be empty or lost.
      bucket.writeAll();
    },
    async stop() {
      await bus?.stop();
      bus = undefined;
      await bucket.stop();
    },
  };
}
