/** Boots the console: config, PostgreSQL, NATS, the app, and shutdown on SIGTERM. */
import { SERVICE_NAMES } from "@dos/contracts";
import { bootService, exitOnConfigError } from "@dos/service-kit";
import { SCHEMA } from "../migrations/index.ts";
import { buildApp } from "./app.ts";
import { loadConsoleConfig } from "./config.ts";

const config = exitOnConfigError(() => loadConsoleConfig());
await bootService({ service: SERVICE_NAMES.console, schema: SCHEMA, config, build: buildApp });
