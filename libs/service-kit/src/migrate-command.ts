/**
 * The `migrate` entrypoint of every service (a Kubernetes Job in production, a step of
 * `npm start` locally): applies the service's migrations to its schema and exits.
 */

import { Type } from "@sinclair/typebox";
import type { Migration } from "kysely/migration";
import { commonConfig, exitOnConfigError, loadConfig } from "./config.ts";
import { createDatabase } from "./db.ts";
import { createLogger } from "./logger.ts";
import { MigrationOrderError, migrate } from "./migrator.ts";

export interface MigrateCommandOptions {
  service: string;
  schema: string;
  prefix: string;
  migrations: Record<string, Migration>;
}

const migrateConfig = Type.Object({ DATABASE_URL: commonConfig.DATABASE_URL, LOG_LEVEL: commonConfig.LOG_LEVEL });

export async function runMigrateCommand(options: MigrateCommandOptions): Promise<void> {
  const config = exitOnConfigError(() => loadConfig(migrateConfig, { prefix: `${options.prefix}MIGRATE_` }));
  const logger = createLogger(`${options.service}-migrate`, config.LOG_LEVEL);
  const database = createDatabase({
    url: config.DATABASE_URL,
    schema: options.schema,
    applicationName: `${options.service}-migrate`,
    poolSize: 1,
  });
  try {
    const direction = process.argv.includes("--down") ? "down" : "latest";
    const result = await migrate(database.db, { schema: options.schema, migrations: options.migrations, direction });
    const applied = (result.results ?? []).map((r) => `${r.direction} ${r.migrationName}`);
    logger.info({ schema: options.schema, applied }, applied.length ? "migrations applied" : "schema is up to date");
  } catch (error) {
    // A misordered name is the operator's to fix, and the message says how: no stack to read past.
    if (error instanceof MigrationOrderError) logger.error({ schema: options.schema }, error.message);
    else logger.error({ err: error }, "migration failed");
    process.exitCode = 1;
  } finally {
    await database.close();
  }
}
