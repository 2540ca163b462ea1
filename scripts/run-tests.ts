/**
 * Runs the tests of the package in the current directory (`npm test -w services/pricing`), or
 * the files given as arguments, against the infrastructure that scripts/infra.ts resolves.
 * The root `npm test` runs every package's tests in one go through scripts/test.ts.
 */
import { resolveInfrastructure } from "./infra.ts";
import { runNodeTests } from "./node-tests.ts";

const files = process.argv.slice(2);
const infra = await resolveInfrastructure();
const code = await runNodeTests({
  cwd: process.cwd(),
  phases:
    files.length > 0
      ? [{ patterns: files }]
      : [
          { patterns: ["src/**/*.test.ts", "test/*.test.ts"] },
          { patterns: ["abuse/**/*.test.ts", "soak/**/*.test.ts", "test/load/*.test.ts"], concurrency: 1 },
        ],
  env: infra.env,
});
await infra.release();
process.exit(code);
