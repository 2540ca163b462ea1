/**
 * `npm test`: the whole check a clean machine and CI run. Finds or provides PostgreSQL and NATS,
 * builds, lints and formats (biome), typechecks, checks the import rules (dependency-cruiser) and
 * that no export is unused (knip), then runs every test file of every package (unit, integration and e2e) in one node:test run. The last line is `tests: N passed, N failed`.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { resolveInfrastructure } from "./infra.ts";
import { runNodeTests } from "./node-tests.ts";
import { root } from "./system.ts";

const started = Date.now();
const infra = await resolveInfrastructure();
const env = { ...process.env, ...infra.env, TURBO_TELEMETRY_DISABLED: "1" };

const run = (label: string, command: string, args: string[]) => {
  process.stdout.write(`test: ${label}\n`);
  return spawnSync(command, args, { cwd: root, env, stdio: "inherit" }).status === 0;
};

// Without a build nothing can run; lint and typecheck failures are counted and the tests still run.
if (!run("build", "npx", ["turbo", "run", "build", "--output-logs=errors-only"])) {
  process.stdout.write("\ntests: 0 passed, 1 failed (the build failed)\n");
  await infra.release();
  process.exit(1);
}
const failedChecks: string[] = [];
if (!run("lint and format", "npx", ["biome", "ci", "--colors=off", "."])) failedChecks.push("lint and format");
const typechecked =
  run("typecheck", "npx", ["turbo", "run", "typecheck", "--output-logs=errors-only"]) &&
  run("typecheck scripts", "npx", ["tsc", "-p", "tsconfig.json"]);
if (!typechecked) failedChecks.push("typecheck");
// The import rules of .dependency-cruiser.cjs (layers, no cycles, services apart) over every
// workspace's top folder and the scripts; each violation is printed with the offending import.
const workspaces: string[] = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).workspaces;
const cruised = [...new Set([...workspaces.map((glob) => glob.split("/")[0] ?? glob), "scripts"])];
const importRules = ["--config", ".dependency-cruiser.cjs", "--output-type", "err", ...cruised];
if (!run("import rules", "npx", ["depcruise", ...importRules])) failedChecks.push("import rules");
// Exports nothing imports (knip.json: the entries it cannot infer from package.json, and types
// used in their own file stay exported, as an exported function's signature may name them).
if (!run("unused exports", "npx", ["knip", "--no-progress"])) failedChecks.push("unused exports");

// Earlier runs' NATS namespaces (an hour old: no run still uses them) would pile up on a shared
// server. Imported only now: the kit is built above.
const { sweepTestNamespaces } = await import("@dos/service-kit/testing");
const swept = await sweepTestNamespaces(infra.env.NATS_URL, 60 * 60 * 1000).catch((error: unknown) => {
  process.stdout.write(`test: could not sweep old test namespaces from NATS: ${String(error)}\n`);
  return 0;
});
if (swept > 0) process.stdout.write(`test: deleted ${swept} streams of earlier runs' test namespaces\n`);
// What the tests install on a fresh machine (Debian's chromium, podman), once and before any of
// them starts: installed by test files running side by side, a browser could be launched while
// dpkg was still setting it up.
const { ensureChromium } = await import("@dos/service-kit/testing-browser");
const { ensurePodman } = await import("./images.ts");
const installing = Date.now();
try {
  ensureChromium();
  ensurePodman();
} catch (error) {
  process.stdout.write(
    `test: could not install what the tests need (they will say what is missing): ${String(error)}\n`,
  );
}
if (Date.now() - installing > 1000) {
  process.stdout.write(`test: system packages installed in ${Math.round((Date.now() - installing) / 1000)} s\n`);
}
process.stdout.write("test: running tests\n");
const code = await runNodeTests({
  cwd: root,
  phases: [
    {
      patterns: [
        "libs/*/src/**/*.test.ts",
        "services/*/test/*.test.ts",
        "tools/*/test/**/*.test.ts",
        "e2e/test/**/*.test.ts",
      ],
    },
    // The abuse suite measures the bystanders' answer times while an attack runs, the fleet soak
    // the system's memory and loss under a tracker fleet, and a service's load tests (its
    // test/load/) what a page or a route costs under load: alone, so that the neighbours' load is
    // not what they measure (and theirs does not slow the neighbours).
    {
      patterns: ["e2e/abuse/**/*.test.ts", "e2e/soak/**/*.test.ts", "services/*/test/load/*.test.ts"],
      concurrency: 1,
    },
  ],
  env: infra.env,
  failedChecks,
});
await infra.release();
process.stderr.write(`test: finished in ${Math.round((Date.now() - started) / 1000)} s\n`);
process.exit(code);
