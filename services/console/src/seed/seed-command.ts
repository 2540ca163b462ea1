/**
 * `node services/console/dist/src/seed/seed-command.js <e-mail>...`: gives each demo user (already
 * in delivery-api, which must be running) a console password, and prints
 * `[{"email", "password"}]` as JSON on stdout. The password is derived from DEMO_SEED_SECRET (as
 * delivery-api's demo tokens are), so every run prints the same ones; it is set only when the
 * user has none or another one, so a password changed through the console is replaced by the
 * demo's at the next `npm start`. For demo accounts only: no real user has a derived password.
 */
import { createHmac } from "node:crypto";
import { createDatabase } from "@dos/service-kit";
import type { Kysely } from "kysely";
import { SCHEMA } from "../../migrations/index.ts";
import type { DB } from "../db/database.ts";
import { createOpsClient } from "../delivery-api/ops-client.ts";
import { hashPassword, verifyPassword } from "../people/passwords.ts";
import { findUserByEmail, setPassword, upsertUser } from "../people/people.repository.ts";

const { DATABASE_URL, CONSOLE_OPS_URL, CONSOLE_OPS_TOKEN, DEMO_SEED_SECRET } = process.env;
if (!DATABASE_URL || !CONSOLE_OPS_URL || !CONSOLE_OPS_TOKEN || !DEMO_SEED_SECRET) {
  process.stderr.write(
    "console seed: DATABASE_URL, CONSOLE_OPS_URL, CONSOLE_OPS_TOKEN and DEMO_SEED_SECRET are required\n",
  );
  process.exit(2);
}

export function demoPassword(secret: string, email: string): string {
  return createHmac("sha256", secret)
    .update(`demo-console-password:${email.toLowerCase()}`)
    .digest("base64url")
    .slice(0, 20);
}

const ops = createOpsClient({ baseUrl: CONSOLE_OPS_URL, token: CONSOLE_OPS_TOKEN, timeoutMs: 10_000 });
const database = createDatabase<DB>({
  url: DATABASE_URL,
  schema: SCHEMA,
  applicationName: "console-seed",
  poolSize: 1,
});
const db = database.db as Kysely<DB>;
try {
  const seeded: Array<{ email: string; password: string }> = [];
  for (const email of process.argv.slice(2)) {
    const apiUser = await ops.findUserByEmail(email);
    if (!apiUser) throw new Error(`no user ${email} in delivery-api: seed delivery-api first`);
    await upsertUser(db, { api_user_id: apiUser.id, account_id: apiUser.account_id, email: apiUser.email });
    const user = await findUserByEmail(db, email);
    const password = demoPassword(DEMO_SEED_SECRET, email);
    if (user && !(await verifyPassword(user.password_hash, password))) {
      await setPassword(db, user.id, await hashPassword(password));
    }
    seeded.push({ email: apiUser.email, password });
  }
  process.stdout.write(`${JSON.stringify(seeded)}\n`);
} catch (error) {
  process.stderr.write(`console seed: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await database.close();
}
