/**
 * Runs a service's own migrations in its own schema, with Kysely's migrator (a lock and a
 * history table inside that schema). Migrations are a record in the service's
 * `migrations/index.ts`, so the build carries them and nothing is read from disk by name.
 */
import { type Kysely, sql } from "kysely";
import { type Migration, type MigrationResultSet, Migrator } from "kysely/migration";

export interface MigrateOptions {
  schema: string;
  migrations: Record<string, Migration>;
  /** "latest" (default) or "down" to undo the last one. */
  direction?: "latest" | "down";
}

export async function migrate(db: Kysely<unknown>, options: MigrateOptions): Promise<MigrationResultSet> {
  await sql`create schema if not exists ${sql.id(options.schema)}`.execute(db);
  const migrator = new Migrator({
    db: db.withSchema(options.schema) as Kysely<unknown>,
    provider: { getMigrations: async () => options.migrations },
    migrationTableSchema: options.schema,
  });
  const result = options.direction === "down" ? await migrator.migrateDown() : await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`migration ${failed} of schema ${options.schema} failed: ${(result.error as Error).message}`, {
      cause: result.error,
    });
  }
  return result;
}
