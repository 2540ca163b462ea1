/**
 * Test helpers for a service's migrations: the files are named as the migrator expects and all
 * listed, and the migrations go up, down and up again on a schema holding rows. Schemas are
 * compared by a catalog snapshot rather than pg_dump, so the check runs against any PostgreSQL
 * the tests are pointed at, whatever client tools the machine has.
 */
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { test } from "node:test";
import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import { createDatabase } from "./db.ts";
import { migrate } from "./migrator.ts";
import { createTestDatabase } from "./testing.ts";

/** The migration files of a service's `migrations/` folder (index.ts aside), without `.ts`, in name order. */
export async function migrationFileNames(dir: URL): Promise<string[]> {
  const files = await readdir(dir);
  return files
    .filter((file) => file.endsWith(".ts") && file !== "index.ts")
    .map((file) => file.slice(0, -".ts".length))
    .sort();
}

/**
 * Every object of a schema as one line each, in a stable order: tables, views, sequences and
 * partitions (with their options, access rights and comments), columns, constraints, indexes,
 * triggers, functions and types. Kysely's history tables are left out: they are the migrator's,
 * and they stay when every migration has gone down.
 */
export async function schemaSnapshot(db: Kysely<unknown>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ line: string }>`
    with rel as (
      select c.oid, c.relname, c.relkind from pg_class c
      where c.relnamespace = ${schema}::regnamespace and c.relname not like 'kysely_migration%'
        and not exists (
          select 1 from pg_depend d join pg_class t on t.oid = d.refobjid
          where d.objid = c.oid and d.classid = 'pg_class'::regclass and t.relname like 'kysely_migration%'
        )
    )
    select concat_ws(' | ', 'relation', r.relname, r.relkind, c.relpersistence, c.reloptions::text, c.relacl::text,
      obj_description(r.oid, 'pg_class'), pg_get_partkeydef(r.oid), pg_get_expr(c.relpartbound, r.oid),
      case when r.relkind = 'v' then pg_get_viewdef(r.oid) end) as line
    from rel r join pg_class c on c.oid = r.oid
    union all
    select concat_ws(' | ', 'column', r.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
      a.attnotnull, a.attidentity, a.attgenerated, co.collname, pg_get_expr(ad.adbin, ad.adrelid),
      col_description(r.oid, a.attnum), a.attacl::text)
    from rel r join pg_attribute a on a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped
    left join pg_attrdef ad on ad.adrelid = r.oid and ad.adnum = a.attnum
    left join pg_collation co on co.oid = a.attcollation and a.attcollation <> 100
    union all
    select concat_ws(' | ', 'constraint', r.relname, k.conname, pg_get_constraintdef(k.oid))
    from rel r join pg_constraint k on k.conrelid = r.oid
    union all
    select concat_ws(' | ', 'index', r.relname, pg_get_indexdef(r.oid)) from rel r where r.relkind in ('i', 'I')
    union all
    select concat_ws(' | ', 'trigger', r.relname, pg_get_triggerdef(t.oid))
    from rel r join pg_trigger t on t.tgrelid = r.oid and not t.tgisinternal
    union all
    select concat_ws(' | ', 'function', pg_get_functiondef(p.oid), p.proacl::text, obj_description(p.oid, 'pg_proc'))
    from pg_proc p where p.pronamespace = ${schema}::regnamespace
    union all
    select concat_ws(' | ', 'type', t.typname, t.typtype, obj_description(t.oid, 'pg_type'))
    from pg_type t
    where t.typnamespace = ${schema}::regnamespace and t.typtype in ('c', 'd', 'e', 'r', 'm')
      and (t.typrelid = 0 or (select relkind from pg_class where oid = t.typrelid) = 'c')
    order by 1
  `.execute(db);
  return rows.map((row) => row.line);
}

export interface MigrationRoundTrip {
  /** The schema after the migrations first went up. */
  migrated: string[];
  /** What is left of it once they all went down (the rows seeded in between were there). */
  afterDown: string[];
  /** The schema after they went up again. */
  remigrated: string[];
}

/**
 * On a database of its own: migrates the schema up, lets `seed` write rows into it, undoes every
 * migration (last first) and migrates up again, returning the schema's snapshot at each stage.
 */
export async function migrationRoundTrip(options: {
  label: string;
  schema: string;
  migrations: Record<string, Migration>;
  seed: (db: Kysely<unknown>) => Promise<void>;
}): Promise<MigrationRoundTrip> {
  const { schema, migrations } = options;
  const testDatabase = await createTestDatabase(options.label);
  const database = createDatabase({ url: testDatabase.url, schema, applicationName: "migrations-test", poolSize: 1 });
  try {
    const { db } = database;
    await migrate(db, { schema, migrations });
    const migrated = await schemaSnapshot(db, schema);
    await options.seed(db);
    for (let step = 0; step < Object.keys(migrations).length; step++) {
      await migrate(db, { schema, migrations, direction: "down" });
    }
    const afterDown = await schemaSnapshot(db, schema);
    await migrate(db, { schema, migrations });
    return { migrated, afterDown, remigrated: await schemaSnapshot(db, schema) };
  } finally {
    await database.close();
    await testDatabase.drop();
  }
}

/**
 * Declares a service's two migration tests: every file in its `migrations/` folder is listed
 * under the same name in `migrations/index.ts` (the migrator checks the names themselves), and
 * the migrations go up, down and up again on a schema holding the rows `seed` writes, leaving
 * nothing after down and the same schema (`objects` among it) after the second up.
 */
export function testMigrations(options: {
  label: string;
  schema: string;
  migrations: Record<string, Migration>;
  /** The service's migrations/ folder. */
  folder: URL;
  /** What `seed` writes, for the test's name: "tariffs". */
  rows: string;
  seed: (db: Kysely<unknown>) => Promise<void>;
  /** Starts of snapshot lines the migrated schema must hold: "relation | tariffs | r |". */
  objects: string[];
}): void {
  test("every file in migrations/ is a migration of index.ts, under the same name", async () => {
    assert.deepEqual(await migrationFileNames(options.folder), Object.keys(options.migrations).sort());
  });

  test(`the migrations go up, down and up again on a schema holding ${options.rows}`, async () => {
    const trip = await migrationRoundTrip(options);
    for (const object of options.objects) {
      assert.ok(
        trip.migrated.some((line) => line.startsWith(object)),
        `${object} in the migrated schema`,
      );
    }
    assert.deepEqual(trip.afterDown, []);
    assert.deepEqual(trip.remigrated, trip.migrated);
  });
}
