import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { persistentSecret, writeSecretFile } from "./secret-file.ts";

const dir = mkdtempSync(path.join(tmpdir(), "secret-file-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const modeOf = (file: string) => statSync(file).mode & 0o777;

test("a secret file is created 0600, in a directory created for it", () => {
  const file = path.join(dir, "var", "demo.json");
  writeSecretFile(file, '{"ops_token":"x"}\n');
  assert.equal(modeOf(file), 0o600);
  assert.equal(readFileSync(file, "utf8"), '{"ops_token":"x"}\n');
});

test("rewriting a world-readable file makes it 0600", () => {
  const file = path.join(dir, "demo-existing.json");
  writeFileSync(file, "old");
  chmodSync(file, 0o644);
  writeSecretFile(file, "new");
  assert.equal(modeOf(file), 0o600);
  assert.equal(readFileSync(file, "utf8"), "new");
});

test("a persistent secret is made once, kept across calls, and its file tightened to 0600", () => {
  const file = path.join(dir, "ops-token");
  const first = persistentSecret(file);
  assert.match(first, /^[A-Za-z0-9_-]{32}$/);
  assert.equal(modeOf(file), 0o600);
  chmodSync(file, 0o666);
  assert.equal(persistentSecret(file), first);
  assert.equal(modeOf(file), 0o600);
});
