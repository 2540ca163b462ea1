/**
 * `node services/console/dist/src/seed/seed-command.js <e-mail>... [--staff <e-mail>...]`: gives
 * each demo user (already in delivery-api, which must be running) a console password, and each
 * demo staff person a password and an authenticator secret, and prints
 * `{"users": [{"email", "password"}], "staff": [{"email", "password", "totp_secret", "totp_uri"}]}`
 * as JSON on stdout. Both are derived from DEMO_SEED_SECRET (as delivery-api's demo tokens are),
 * so every run prints the same ones; they are set only when the person has none or others, so a
 * password changed through the console is replaced by the demo's at the next `npm start`. For
 * demo accounts only: no real person has derived credentials. A staff person signs in with the
 * password and the code an authenticator app (or any TOTP tool, `oathtool --totp -b <secret>`)
 * shows for the secret.
 */
import { createHmac } from "node:crypto";
import { createDatabase } from "@dos/service-kit";
import type { Kysely } from "kysely";
import { SCHEMA } from "../../migrations/index.ts";
import type { DB } from "../db/database.ts";
import { createOpsClient } from "../delivery-api/ops-client.ts";
import { hashPassword, verifyPassword } from "../people/passwords.ts";
import { findUserByEmail, setPassword, upsertUser } from "../people/people.repository.ts";
import { createSealer } from "../secrets.ts";
import { setStaffPassword, setTotpSecret, upsertStaffCredentials } from "../staff/staff.repository.ts";
import { totpSecretFromHex, totpUri } from "../staff/totp.ts";

const { DATABASE_URL, CONSOLE_OPS_URL, CONSOLE_OPS_TOKEN, CONSOLE_SECRET_KEY, DEMO_SEED_SECRET } = process.env;
if (!DATABASE_URL || !CONSOLE_OPS_URL || !CONSOLE_OPS_TOKEN || !CONSOLE_SECRET_KEY || !DEMO_SEED_SECRET) {
  process.stderr.write(
    "console seed: DATABASE_URL, CONSOLE_OPS_URL, CONSOLE_OPS_TOKEN, CONSOLE_SECRET_KEY and DEMO_SEED_SECRET are required\n",
  );
  process.exit(2);
}

const derived = (secret: string, purpose: string, email: string) =>
  createHmac("sha256", secret).update(`${purpose}:${email.toLowerCase()}`).digest();

export const demoPassword = (secret: string, email: string): string =>
  derived(secret, "demo-console-password", email).toString("base64url").slice(0, 20);

const demoStaffPassword = (secret: string, email: string): string =>
  derived(secret, "demo-staff-password", email).toString("base64url").slice(0, 20);

/** 20 bytes, as an authenticator secret should be, in base32. */
const demoTotpSecret = (secret: string, email: string): string =>
  totpSecretFromHex(derived(secret, "demo-staff-totp", email).subarray(0, 20).toString("hex"));

const ops = createOpsClient({ baseUrl: CONSOLE_OPS_URL, token: CONSOLE_OPS_TOKEN, timeoutMs: 10_000 });
const database = createDatabase<DB>({
  url: DATABASE_URL,
  schema: SCHEMA,
  applicationName: "console-seed",
  poolSize: 1,
});
const db = database.db as Kysely<DB>;
const separator = process.argv.indexOf("--staff");
const userEmails = process.argv.slice(2, separator === -1 ? undefined : separator);
const staffEmails = separator === -1 ? [] : process.argv.slice(separator + 1);
const sealer = createSealer(CONSOLE_SECRET_KEY);
try {
  const users: Array<{ email: string; password: string }> = [];
  for (const email of userEmails) {
    const apiUser = await ops.findUserByEmail(email);
    if (!apiUser) throw new Error(`no user ${email} in delivery-api: seed delivery-api first`);
    await upsertUser(db, { api_user_id: apiUser.id, account_id: apiUser.account_id, email: apiUser.email });
    const user = await findUserByEmail(db, email);
    const password = demoPassword(DEMO_SEED_SECRET, email);
    if (user && !(await verifyPassword(user.password_hash, password))) {
      await setPassword(db, user.id, await hashPassword(password));
    }
    users.push({ email: apiUser.email, password });
  }
  const staff: Array<{ email: string; password: string; totp_secret: string; totp_uri: string }> = [];
  for (const email of staffEmails) {
    const person = await ops.findStaffByEmail(email);
    if (!person) throw new Error(`no staff member ${email} in delivery-api: seed delivery-api first`);
    const credentials = await upsertStaffCredentials(db, { staff_id: person.id, email: person.email });
    const password = demoStaffPassword(DEMO_SEED_SECRET, email);
    if (!(await verifyPassword(credentials.password_hash, password))) {
      await setStaffPassword(db, person.id, await hashPassword(password));
    }
    const secret = demoTotpSecret(DEMO_SEED_SECRET, email);
    const current = credentials.totp_secret_sealed ? sealer.open(credentials.totp_secret_sealed) : undefined;
    // The same secret keeps its last used step: a code used before this run stays used.
    if (current !== secret) await setTotpSecret(db, person.id, sealer.seal(secret), 0);
    staff.push({ email: person.email, password, totp_secret: secret, totp_uri: totpUri(secret, person.email) });
  }
  process.stdout.write(`${JSON.stringify({ users, staff })}\n`);
} catch (error) {
  process.stderr.write(`console seed: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await database.close();
}
