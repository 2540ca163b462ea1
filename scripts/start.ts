/**
 * `npm start`: the whole system on this machine. Finds or provides PostgreSQL and NATS, builds,
 * migrates, seeds the demo accounts and fleet, starts the five services, prints their URLs and stays in
 * the foreground until Ctrl-C, then stops everything cleanly.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
// The source, not the package: this runs before the build that makes the package's dist.
import { persistentSecret, writeSecretFile } from "../libs/service-kit/src/secret-file.ts";
import { resolveInfrastructure } from "./infra.ts";
import { migrateAll, root, SERVICES, startSystem } from "./system.ts";

const varDir = path.join(root, "var");
mkdirSync(varDir, { recursive: true });
// biome-ignore lint/suspicious/noUndeclaredEnvVars: npm start's own setting, read by no turbo task
const basePort = Number(process.env.START_PORT ?? 3000);

const infra = await resolveInfrastructure();
step("building");
const build = spawnSync("npx", ["turbo", "run", "build", "--output-logs=errors-only"], { cwd: root, stdio: "inherit" });
if (build.status !== 0) fail("the build failed (its errors are above)");

const opsToken = persistentSecret(path.join(varDir, "ops-token"));
const env: Record<string, string> = {
  ...infra.env,
  LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
  API_OPS_TOKEN: opsToken,
  WEBHOOKS_SECRET_KEY: persistentSecret(path.join(varDir, "webhooks-secret-key")),
  CONSOLE_SECRET_KEY: persistentSecret(path.join(varDir, "console-secret-key"), 32),
  // The local demo's receivers run on this machine: let webhooks reach loopback here only.
  WEBHOOKS_ALLOWED_HOSTS: "127.0.0.0/8,::1,localhost",
  API_PUBLIC_URL: `http://localhost:${basePort}`,
};

step("migrating");
await migrateAll(env).catch((error: Error) => fail(error.message));

step("seeding the demo accounts and fleet");
const seed = spawnSync(process.execPath, [path.join(root, "services/delivery-api/dist/src/seed/seed-command.js")], {
  env: { ...process.env, ...env },
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
});
if (seed.status !== 0) fail("the demo seed failed (its error is above)");
const seeded = JSON.parse(seed.stdout) as {
  accounts: Array<{ email: string }>;
  vehicles: unknown[];
  staff: Array<{ id: number; email: string; name: string; role: string }>;
};

step("starting services (logs in var/log/)");
const system = await startSystem({ env, basePort, logDir: path.join(varDir, "log") }).catch((error: Error) =>
  fail(`${error.message}; see var/log/`),
);

// The demo users' console passwords, and the demo staff's passwords and authenticator secrets:
// the console seed needs delivery-api running to find them.
const consoleEnv = SERVICES.find((spec) => spec.name === "console")?.links?.(basePort, env) ?? {};
const consoleSeed = spawnSync(
  process.execPath,
  [
    path.join(root, "services/console/dist/src/seed/seed-command.js"),
    ...seeded.accounts.map((a) => a.email),
    "--staff",
    ...seeded.staff.map((person) => person.email),
  ],
  {
    env: {
      ...process.env,
      ...env,
      ...consoleEnv,
      // biome-ignore lint/suspicious/noUndeclaredEnvVars: npm start's own setting, read by no turbo task
      DEMO_SEED_SECRET: process.env.DEMO_SEED_SECRET || persistentSecret(path.join(varDir, "demo-seed-secret"), 32),
    },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  },
);
if (consoleSeed.status !== 0) {
  await system.stop();
  fail("the console's demo seed failed (its error is above)");
}
const consoleSeeded = JSON.parse(consoleSeed.stdout) as {
  users: Array<{ email: string; password: string }>;
  staff: Array<{ email: string; password: string; totp_secret: string; totp_uri: string }>;
};
const sameEmail = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const demo = {
  api_url: system.url("delivery-api"),
  console_url: consoleEnv.CONSOLE_PUBLIC_URL,
  geo_url: system.url("geo-ingest"),
  // delivery-api's internal listener: the only address serving the operator API (/ops/v1).
  ops_url: system.opsUrl,
  ops_token: opsToken,
  accounts: seeded.accounts.map((account) => ({
    ...account,
    console_user: consoleSeeded.users.find((user) => sameEmail(user.email, account.email)),
  })),
  vehicles: seeded.vehicles,
  // The operator's demo staff, one per role (delivery-api's ids and e-mails); they sign in at
  // /staff/sign-in with the password, then the code an authenticator app (or
  // `oathtool --totp -b <totp_secret>`) shows for the secret.
  staff_sign_in_url: `${consoleEnv.CONSOLE_PUBLIC_URL}/staff/sign-in`,
  staff: seeded.staff.map((person) => ({
    ...person,
    console: consoleSeeded.staff.find((credentials) => sameEmail(credentials.email, person.email)),
  })),
};
// It holds the operator token and the demo accounts' tokens: owner-only, like var/ops-token.
writeSecretFile(path.join(varDir, "demo.json"), `${JSON.stringify(demo, null, 2)}\n`);

process.stdout.write("\nDelivery Ordering Service is running:\n");
for (const service of system.services) {
  process.stdout.write(`  ${service.spec.name.padEnd(20)} ${service.url}  (ready: ${service.url}/readyz)\n`);
}
process.stdout.write(`  ${"operator API".padEnd(20)} ${system.opsUrl}/ops/v1  (internal listener)\n`);
process.stdout.write(
  `\nConsole: ${demo.console_url} (demo users and passwords: var/demo.json, accounts[].console_user)\n`,
);
process.stdout.write(
  `Staff console: ${demo.staff_sign_in_url} (demo staff, passwords and authenticator secrets: var/demo.json, staff[].console)\n`,
);
process.stdout.write(`\nDemo credentials: var/demo.json. Operator CLI: npm run ops -- help\nPress Ctrl-C to stop.\n`);

let stopping = false;
async function stop(reason: string) {
  if (stopping) return;
  stopping = true;
  step(`stopping (${reason})`);
  const results = await system.stop();
  for (const r of results) process.stdout.write(`  ${r.name} exited ${r.code ?? r.signal} in ${r.ms} ms\n`);
  await infra.release();
  process.exit(results.every((r) => r.code === 0) ? 0 : 1);
}
process.on("SIGINT", () => void stop("Ctrl-C"));
process.on("SIGTERM", () => void stop("SIGTERM"));
for (const service of system.services) {
  service.exited.then(({ code, signal }) => {
    if (!stopping) {
      process.stderr.write(
        `${service.spec.name} exited unexpectedly (${code ?? signal}); see var/log/${service.spec.name}.log\n`,
      );
      void stop(`${service.spec.name} exited`);
    }
  });
}

function fail(reason: string): never {
  process.stderr.write(`start: ${reason}\n`);
  process.exit(1);
}

function step(text: string) {
  process.stdout.write(`start: ${text}\n`);
}
