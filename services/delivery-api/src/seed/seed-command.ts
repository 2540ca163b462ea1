/**
 * `node services/delivery-api/src/seed/seed-command.ts`: seeds the demo accounts into the database
 * at DATABASE_URL (already migrated) and prints `{"accounts": [...], "vehicles": [...], "staff": [...]}` as JSON on stdout.
 * The token secret is DEMO_SEED_SECRET, else var/demo-seed-secret (created on first use), so
 * every run prints the same tokens.
 */
import { fileURLToPath } from "node:url";
import { createDatabase, persistentSecret } from "@dos/service-kit";
import type { Kysely } from "kysely";
import { SCHEMA } from "../../migrations/index.ts";
import type { DB } from "../db/database.ts";
import { seedDemo } from "./demo-seed.ts";

const SECRET_FILE = fileURLToPath(new URL("../../../../var/demo-seed-secret", import.meta.url));

function seedSecret(): string {
  return process.env.DEMO_SEED_SECRET || persistentSecret(SECRET_FILE, 32);
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
