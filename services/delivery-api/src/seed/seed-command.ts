/**
 * `node services/delivery-api/src/seed/seed-command.ts`: seeds the demo accounts into the database
 * at DATABASE_URL (already migrated) and prints `{"accounts": [...], "vehicles": [...]}` as JSON on stdout.
 * The token secret is DEMO_SEED_SECRET, else var/demo-seed-secret (created on first use), so
 * every run prints the same tokens.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createDatabase } from "@dos/service-kit";
import type { Kysely } from "kysely";
import { SCHEMA } from "../../migrations/index.ts";
import type { DB } from "../db/database.ts";
import { seedDemo } from "./demo-seed.ts";

const SECRET_FILE = fileURLToPath(new URL("../../../../var/demo-seed-secret", import.meta.url));

function seedSecret(): string {
  if (process.env.DEMO_SEED_SECRET) return process.env.DEMO_SEED_SECRET;
  if (!existsSync(SECRET_FILE)) {
    mkdirSync(dirname(SECRET_FILE), { recursive: true });
    writeFileSync(SECRET_FILE, randomBytes(32).toString("base64url"), { mode: 0o600 });
  }
  return readFileSync(SECRET_FILE, "utf8").trim();
}

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write("seed: DATABASE_URL is required\n");
  process.exit(2);
}
const database = createDatabase<DB>({ url, schema: SCHEMA, applicationName: "delivery-api-seed" });
try {
  const seeded = await seedDemo(database.db as Kysely<DB>, { secret: seedSecret() });
  process.stdout.write(`${JSON.stringify(seeded, null, 2)}\n`);
} catch (error) {
  const message = (error as Error).message;
  const hint = /relation .* does not exist/.test(message) ? " (run the migrations first: npm run migrate)" : "";
  process.stderr.write(`seed: ${message}${hint}\n`);
  process.exitCode = 1;
} finally {
  await database.close();
}
