/** Boots delivery-api: config, PostgreSQL, NATS, the app, and shutdown on SIGTERM. */
import { SERVICE_NAMES } from "@dos/contracts";
import { bootService, exitOnConfigError, loadConfig } from "@dos/service-kit";
import { SCHEMA } from "../migrations/index.ts";
import { buildApp, NATS_CONNECTION } from "./app.ts";
import { CONFIG_PREFIX, configSchema } from "./config.ts";

const config = exitOnConfigError(() => loadConfig(configSchema, { prefix: CONFIG_PREFIX }));
await bootService({ service: SERVICE_NAMES.deliveryApi, schema: SCHEMA, config, ...NATS_CONNECTION, build: buildApp });
