/**
 * `npm test`: the whole check a clean machine and CI run. Finds or provides PostgreSQL and NATS,
 * builds, lints and formats (biome), typechecks, then runs every test file of every package
 * (unit, integration and e2e) in one node:test run. The last line is `tests: N passed, N failed`.
 */
import { spawnSync } from "node:child_process";
import { resolveInfrastructure } from "./infra.ts";
import { runNodeTests } from "./node-tests.ts";
import { root } from "./system.ts";

const started = Date.now();
const infra = await resolveInfrastructure();
const env = { ...process.env, ...infra.env, TURBO_TELEMETRY_DISABLED: "1" };

const steps: Array<[string, string, string[]]> = [
  ["build", "npx", ["turbo", "run", "build", "--output-logs=errors-only"]],
  ["lint and format", "npx", ["biome", "ci", "."]],
  ["typecheck", "npx", ["turbo", "run", "typecheck", "--output-logs=errors-only"]],
];
for (const [label, command, args] of steps) {
  process.stdout.write(`test: ${label}\n`);
  const result = spawnSync(command, args, { cwd: root, env, stdio: "inherit" });
  if (result.status !== 0) {
    process.stdout.write(`\ntests: 0 passed, 1 failed (${label} failed)\n`);
    await infra.release();
    process.exit(1);
  }
}

process.stdout.write("test: running tests\n");
const code = await runNodeTests({
  cwd: root,
  patterns: ["libs/*/src/**/*.test.ts", "services/*/test/**/*.test.ts", "e2e/test/**/*.test.ts"],
  env: infra.env,
});
await infra.release();
process.stderr.write(`test: finished in ${Math.round((Date.now() - started) / 1000)} s\n`);
process.exit(code);
