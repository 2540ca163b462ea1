/** Boots webhook-dispatcher: config, PostgreSQL, NATS, the app, and shutdown on SIGTERM. */
import { SERVICE_NAMES } from "@dos/contracts";
import { bootService, exitOnConfigError } from "@dos/service-kit";
import { SCHEMA } from "../migrations/index.ts";
import { buildApp } from "./app.ts";
import { loadDispatcherConfig } from "./config.ts";

const config = exitOnConfigError(() => loadDispatcherConfig());
await bootService({ service: SERVICE_NAMES.webhookDispatcher, schema: SCHEMA, config, build: buildApp });
