/**
 * Runs a service's own migrations in its own schema, with Kysely's migrator (a lock and a
 * history table inside that schema). Migrations are a record in the service's
 * `migrations/index.ts`, so the build carries them and nothing is read from disk by name.
 *
 * Names are a plain sequence, `NNNN_<what>` (`0001_baseline`, `0002_outbox_index`), as are their
 * files: a number can be taken only once, and a new migration takes the next one, so the order
 * never depends on a date or a clock. Before Kysely runs anything, the names are checked against
 * the ones already applied, and a misordered one is refused with a message saying what to do.
 */
import { type Kysely, sql } from "kysely";
import { type Migration, type MigrationResultSet, Migrator } from "kysely/migration";

export interface MigrateOptions {
  schema: string;
  migrations: Record<string, Migration>;
  /** "latest" (default) or "down" to undo the last one. */
  direction?: "latest" | "down";
}

/**
 * A migration's name (its file's, without `.ts`): four digits, then lower-case words joined by
 * `_`, the first starting with a letter, so a dated name (`2026_12_21_x`) is not taken for one.
 */
const MIGRATION_NAME = /^(\d{4})_[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** Kysely's history table, kept in the service's schema (migrationTableSchema). */
const HISTORY_TABLE = "kysely_migration";

/** The migrations cannot run as named: nothing was applied. */
export class MigrationOrderError extends Error {
  override name = "MigrationOrderError";
}

/**
 * Why `names` (this build's migrations) cannot run on a schema that has `applied` (in the
 * order applied), or undefined when they can. Each message names the migration at fault and
 * says what to do.
 */
export function migrationOrderProblem(schema: string, names: string[], applied: string[]): string | undefined {
  const sorted = [...names].sort();
  const numbers = sorted.map((name) => MIGRATION_NAME.exec(name)?.[1]);
  const next = String(Math.max(0, ...numbers.map(Number).filter(Number.isFinite)) + 1).padStart(4, "0");
  const fix = (name: string) =>
    `${next}_${name
      .replace(/^(\d+_)+/, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")}`;
  const where = "(its file in migrations/ and its key in migrations/index.ts)";

  const badName = sorted.find((_, i) => numbers[i] === undefined);
  if (badName !== undefined) {
    return (
      `migration ${badName} of schema ${schema} is not named NNNN_<what> (four digits, then lower-case ` +
      `words joined by "_", the first starting with a letter): rename it ${where}, e.g. ${fix(badName)}`
    );
  }
  for (let i = 1; i < sorted.length; i++) {
    if (numbers[i] === numbers[i - 1]) {
      return (
        `migrations ${sorted[i - 1]} and ${sorted[i]} of schema ${schema} share the number ${numbers[i]}: ` +
        `renumber the newer one ${where} to the next free number, e.g. ${fix(sorted[i] as string)}`
      );
    }
  }
  const known = new Set(names);
  const missing = applied.find((name) => !known.has(name));
  if (missing !== undefined) {
    return (
      `migration ${missing} was applied to schema ${schema} but is not among this build's migrations ` +
      `(${sorted.join(", ")}): the schema was migrated by another version of the service. Run that ` +
      `version, or, on a database whose data can go, drop schema ${schema} cascade and migrate again`
    );
  }
  const lastApplied = [...applied].sort().at(-1);
  const done = new Set(applied);
  const early = lastApplied === undefined ? undefined : sorted.find((name) => !done.has(name) && name < lastApplied);
  if (early !== undefined) {
    return (
      `migration ${early} of schema ${schema} is not applied yet but sorts before ${lastApplied}, ` +
      `the last migration applied: migrations run in name order and never go back, so renumber it ` +
      `after the last one ${where}, e.g. ${fix(early)}`
    );
  }
  return undefined;
}

/** The migrations already applied to the schema, in name order (none when it was never migrated). */
async function appliedMigrations(db: Kysely<unknown>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ exists: boolean }>`
    select to_regclass(format('%I.%I', ${schema}::text, ${HISTORY_TABLE}::text)) is not null as exists
  `.execute(db);
  if (!rows[0]?.exists) return [];
  const history = await sql<{ name: string }>`
    select name from ${sql.table(`${schema}.${HISTORY_TABLE}`)} order by name
  `.execute(db);
  return history.rows.map((row) => row.name);
}

export async function migrate(db: Kysely<unknown>, options: MigrateOptions): Promise<MigrationResultSet> {
  const problem = migrationOrderProblem(
    options.schema,
    Object.keys(options.migrations),
    await appliedMigrations(db, options.schema),
  );
  if (problem) throw new MigrationOrderError(problem);
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
