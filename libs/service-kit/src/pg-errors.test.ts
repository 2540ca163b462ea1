import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { isUniqueViolation, refusesData } from "./pg-errors.ts";
import { createTestDatabase } from "./testing.ts";

test("PostgreSQL's own errors are told apart by SQLSTATE", async () => {
  const database = await createTestDatabase("pgerrors");
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  try {
    await pool.query("CREATE TABLE t (id int PRIMARY KEY, n smallint, CONSTRAINT t_n_key UNIQUE (n))");
    await pool.query("INSERT INTO t VALUES (1, 1)");
    const duplicate = await pool.query("INSERT INTO t VALUES (2, 1)").catch((error: unknown) => error);
    assert.equal(isUniqueViolation(duplicate), true);
    assert.equal(isUniqueViolation(duplicate, "t_n_key"), true);
    assert.equal(isUniqueViolation(duplicate, "t_pkey"), false);
    assert.equal(refusesData(duplicate), true);

    const outOfRange = await pool.query("INSERT INTO t VALUES (3, 100000)").catch((error: unknown) => error);
    assert.equal(isUniqueViolation(outOfRange), false);
    assert.equal(refusesData(outOfRange), true);

    const missing = await pool.query("SELECT * FROM nowhere").catch((error: unknown) => error);
    assert.equal(refusesData(missing), false);
    assert.equal(isUniqueViolation(null), false);
  } finally {
    await pool.end();
    await database.drop();
  }
});
