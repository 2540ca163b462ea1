/**
 * SQL lives only in repositories (*.repository.ts) and the schema (db/, *.table.ts). The import
 * rules (.dependency-cruiser.cjs) keep kysely's `sql` out of other files, but a query builder
 * reached through a typed handle imports nothing: this reads the sources for the builder's entry
 * points and names every line that writes SQL elsewhere.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";

const SRC = path.join(import.meta.dirname, "..", "src");
const SQL_ALLOWED = /(\.repository\.ts|\.table\.ts)$|^db\//;
/** Where a query starts: a builder on a database handle or a transaction, or a raw `sql` template. */
const WRITES_SQL =
  /\.(selectFrom|insertInto|updateTable|deleteFrom|mergeInto|replaceInto|selectNoFrom|with)\(|\bsql(<[^>]*>)?`/;

test("SQL is written only in repositories", async () => {
  const files = (await readdir(SRC, { recursive: true })).filter(
    (file) => file.endsWith(".ts") && !file.endsWith(".test.ts"),
  );
  assert.ok(files.length > 50, `only ${files.length} source files found under ${SRC}`);
  const offending: string[] = [];
  for (const file of files) {
    if (SQL_ALLOWED.test(file)) continue;
    const lines = (await readFile(path.join(SRC, file), "utf8")).split("\n");
    lines.forEach((line, index) => {
      if (WRITES_SQL.test(line)) offending.push(`src/${file}:${index + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(offending, [], `SQL outside a repository:\n${offending.join("\n")}`);
});
