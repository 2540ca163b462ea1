/** Runs node's test runner over TypeScript test files, with the spec output and our summary line. */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const scriptsDir = path.dirname(fileURLToPath(import.meta.url));

export interface NodeTestOptions {
  cwd: string;
  patterns: string[];
  env: Record<string, string>;
  concurrency?: number;
  /** Checks that failed before the tests ran (lint, typecheck): each counts as one failed test. */
  failedChecks?: string[];
}

/** Runs the tests; the summary reporter's line is printed after the run, so it is the last line. */
export async function runNodeTests(options: NodeTestOptions): Promise<number> {
  const summaryFile = path.join(scriptsDir, "..", "var", `test-summary-${process.pid}.txt`);
  mkdirSync(path.dirname(summaryFile), { recursive: true });
  const args = [
    "--test",
    `--test-concurrency=${options.concurrency ?? Number(process.env.TEST_CONCURRENCY ?? 3)}`,
    "--test-timeout=120000",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${path.join(scriptsDir, "summary-reporter.ts")}`,
    `--test-reporter-destination=${summaryFile}`,
    ...options.patterns,
  ];
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, NODE_ENV: "test" },
      stdio: "inherit",
    });
    child.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  let summary = "tests: 0 passed, 1 failed (the test runner wrote no summary)\n";
  try {
    summary = readFileSync(summaryFile, "utf8");
  } catch {}
  rmSync(summaryFile, { force: true });
  const failedChecks = options.failedChecks ?? [];
  if (failedChecks.length > 0) {
    summary = summary.replace(/(\d+) failed/, (_, n) => `${Number(n) + failedChecks.length} failed`);
    summary = `failed checks: ${failedChecks.join(", ")}\n${summary}`;
  }
  process.stdout.write(`\n${summary}`);
  return failedChecks.length > 0 ? 1 : code;
}
