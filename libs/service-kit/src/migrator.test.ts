import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import type { Migration } from "kysely/migration";
import { createDatabase, type Database } from "./db.ts";
import { MigrationOrderError, migrate, migrationOrderProblem } from "./migrator.ts";
import { createTestDatabase, type TestDatabase } from "./testing.ts";

describe("migration names", () => {
  test("a plain sequence applied in order passes", () => {
    assert.equal(migrationOrderProblem("s", ["0001_baseline", "0002_outbox_index"], ["0001_baseline"]), undefined);
    assert.equal(migrationOrderProblem("s", ["0001_baseline"], []), undefined);
  });

  test("a name off the sequence pattern is refused, naming it and the name to use", () => {
    assert.equal(
      migrationOrderProblem("delivery", ["0001_baseline", "2026_12_21_Outbox-Index"], ["0001_baseline"]),
      'migration 2026_12_21_Outbox-Index of schema delivery is not named NNNN_<what> (four digits, then lower-case words joined by "_", the first starting with a letter): rename it (its file in migrations/ and its key in migrations/index.ts), e.g. 0002_outbox_index',
    );
    assert.match(
      migrationOrderProblem("s", ["1_baseline"], []) ?? "",
      /^migration 1_baseline of schema s is not named/,
    );
    assert.match(migrationOrderProblem("s", ["0001"], []) ?? "", /^migration 0001 of schema s is not named/);
    assert.match(
      migrationOrderProblem("s", ["2026_12_21_x"], []) ?? "",
      /^migration 2026_12_21_x of schema s is not named/,
    );
  });

  test("two migrations with one number are refused, naming both and the next free number", () => {
    assert.equal(
      migrationOrderProblem("geo", ["0001_baseline", "0002_round_index", "0002_speed_column"], ["0001_baseline"]),
      "migrations 0002_round_index and 0002_speed_column of schema geo share the number 0002: renumber the newer one (its file in migrations/ and its key in migrations/index.ts) to the next free number, e.g. 0003_speed_column",
    );
  });

  test("a new migration sorting before the last applied one is refused, naming both", () => {
    assert.equal(
      migrationOrderProblem(
        "pricing",
        ["0001_baseline", "0002_notes", "0003_currency"],
        ["0001_baseline", "0003_currency"],
      ),
      "migration 0002_notes of schema pricing is not applied yet but sorts before 0003_currency, the last migration applied: migrations run in name order and never go back, so renumber it after the last one (its file in migrations/ and its key in migrations/index.ts), e.g. 0004_notes",
    );
  });

  test("a schema migrated by another version (an applied migration this build lacks) is refused", () => {
    assert.equal(
      migrationOrderProblem("webhooks", ["0001_baseline"], ["2026_11_21_0001_webhooks"]),
      "migration 2026_11_21_0001_webhooks was applied to schema webhooks but is not among this build's migrations (0001_baseline): the schema was migrated by another version of the service. Run that version, or, on a database whose data can go, drop schema webhooks cascade and migrate again",
    );
  });
});

describe("the migrator refuses a misordered migration before running anything", () => {
  let testDatabase: TestDatabase;
  let database: Database<unknown>;
  const schema = "ordering";
  const table = (name: string): Migration => ({
    up: async (db) => void (await sql`create table ${sql.id(name)} (id int)`.execute(db)),
    down: async (db) => void (await sql`drop table ${sql.id(name)}`.execute(db)),
  });
  const tables = async () => {
    const { rows } = await database.pool.query<{ name: string }>(
      "select tablename as name from pg_tables where schemaname = $1 and tablename not like 'kysely%' order by 1",
      [schema],
    );
    return rows.map((row) => row.name);
  };

  before(async () => {
    testDatabase = await createTestDatabase("migrator_order");
    database = createDatabase({ url: testDatabase.url, schema, applicationName: "migrator-test", poolSize: 1 });
    await migrate(database.db, { schema, migrations: { "0001_first": table("first"), "0003_third": table("third") } });
  });
  after(async () => {
    await database.close();
    await testDatabase.drop();
  });

  test("a new migration numbered before the last applied one", async () => {
    const migrations = { "0001_first": table("first"), "0002_second": table("second"), "0003_third": table("third") };
    await assert.rejects(migrate(database.db, { schema, migrations }), (error: Error) => {
      assert.ok(error instanceof MigrationOrderError);
      assert.match(
        error.message,
        /^migration 0002_second of schema ordering is not applied yet but sorts before 0003_third/,
      );
      assert.match(error.message, /e\.g\. 0004_second$/);
      return true;
    });
    assert.deepEqual(await tables(), ["first", "third"]);
  });

  test("a duplicate number, and a name off the pattern", async () => {
    const base = { "0001_first": table("first"), "0003_third": table("third") };
    await assert.rejects(
      migrate(database.db, { schema, migrations: { ...base, "0003_fourth": table("fourth") } }),
      /^MigrationOrderError: migrations 0003_fourth and 0003_third of schema ordering share the number 0003/,
    );
    await assert.rejects(
      migrate(database.db, { schema, migrations: { ...base, "2026_12_21_fourth": table("fourth") } }),
      /^MigrationOrderError: migration 2026_12_21_fourth of schema ordering is not named NNNN_<what>/,
    );
    assert.deepEqual(await tables(), ["first", "third"]);
  });

  test("renumbered after the last applied one, it runs", async () => {
    const migrations = { "0001_first": table("first"), "0003_third": table("third"), "0004_second": table("second") };
    const result = await migrate(database.db, { schema, migrations });
    assert.deepEqual(
      result.results?.map((r) => r.migrationName),
      ["0004_second"],
    );
    assert.deepEqual(await tables(), ["first", "second", "third"]);
  });
});
