/** Boots delivery-api: config, PostgreSQL, NATS, the app, and shutdown on SIGTERM. */
import { SERVICE_NAMES } from "@dos/contracts";
import { bootService, exitOnConfigError, loadConfig } from "@dos/service-kit";
import { SCHEMA } from "../migrations/index.ts";
import { buildApp } from "./app.ts";
import { CONFIG_PREFIX, configSchema } from "./config.ts";

const config = exitOnConfigError(() => loadConfig(configSchema, { prefix: CONFIG_PREFIX }));
// The outbox relays publish on a connection of their own, so that a stream slow to store never
// holds back the quotes a create waits on (libs/service-kit nats.ts, NatsHandle.publisher).
await bootService({
  service: SERVICE_NAMES.deliveryApi,
  schema: SCHEMA,
  config,
  separatePublisher: true,
  build: buildApp,
});
