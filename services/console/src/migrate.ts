/** The migrate entrypoint: applies console's migrations to the `console` schema and exits. */
import { SERVICE_NAMES } from "@dos/contracts";
import { runMigrateCommand } from "@dos/service-kit";
import { migrations, SCHEMA } from "../migrations/index.ts";
import { CONFIG_PREFIX } from "./config.ts";

await runMigrateCommand({ service: SERVICE_NAMES.console, schema: SCHEMA, prefix: CONFIG_PREFIX, migrations });
