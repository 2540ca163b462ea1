/** Builds geo-ingest from its dependencies; never listens (main.ts does, tests use inject). */
import { SERVICE_NAMES } from "@dos/contracts";
import { type BuiltService, createHttpApp, type ServiceDeps } from "@dos/service-kit";
import type { Config } from "./config.ts";

export async function buildApp(deps: ServiceDeps<Config>): Promise<BuiltService> {
  const { app } = createHttpApp({
    service: SERVICE_NAMES.geoIngest,
    logger: deps.logger,
    lifecycle: deps.lifecycle,
    checks: { postgres: deps.database.check, nats: deps.nats.check },
  });
  return { app };
}
