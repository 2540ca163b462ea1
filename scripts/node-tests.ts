/** Runs node's test runner over TypeScript test files, with the spec output and our summary line. */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const scriptsDir = path.dirname(fileURLToPath(import.meta.url));

export interface TestPhase {
  patterns: string[];
  /** Files run at once; the default is TEST_CONCURRENCY (3). */
  concurrency?: number;
}

export interface NodeTestOptions {
  cwd: string;
  /** Phases run one after the other; each is one node:test run over its patterns. */
  phases: TestPhase[];
  env: Record<string, string>;
  /** Checks that failed before the tests ran (lint, typecheck): each counts as one failed test. */
  failedChecks?: string[];
}

/**
 * Runs the tests, phase after phase; one summary, added up over the phases, is printed after the
 * last run, so it is the last line.
 */
export async function runNodeTests(options: NodeTestOptions): Promise<number> {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures: string[] = [];
  const timings: string[] = [];
  let code = 0;
  for (const [index, phase] of options.phases.entries()) {
    const run = await runPhase(options, phase);
    if (run.code !== 0) code = run.code;
    const counts = /tests: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?/.exec(run.summary);
    if (!counts) {
      failed++;
      failures.push(`  ✖ ${phase.patterns.join(" ")} › the test runner wrote no summary`);
      continue;
    }
    passed += Number(counts[1]);
    failed += Number(counts[2]);
    skipped += Number(counts[3] ?? 0);
    failures.push(...run.summary.split("\n").filter((line) => line.startsWith("  ✖ ")));
    const slowBlock = /slowest files:\n((?: {2}\d+ s .*\n)+)/.exec(run.summary);
    if (slowBlock?.[1]) timings.push(`slowest files of phase ${index + 1}:\n${slowBlock[1]}`);
    const lingerBlock = /(files that lived on after their tests.*\n(?: {2}\d+ s .*\n)+)/.exec(run.summary);
    if (lingerBlock?.[1]) timings.push(lingerBlock[1]);
  }
  const failedChecks = options.failedChecks ?? [];
  failed += failedChecks.length;
  let summary = timings.join("");
  if (failedChecks.length > 0) summary += `failed checks: ${failedChecks.join(", ")}\n`;
  if (failures.length > 0) summary += `failed tests:\n${failures.join("\n")}\n`;
  summary += `tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`;
  process.stdout.write(`\n${summary}`);
  return failed > 0 ? 1 : code;
}

async function runPhase(options: NodeTestOptions, phase: TestPhase): Promise<{ code: number; summary: string }> {
  const summaryFile = path.join(scriptsDir, "..", "var", `test-summary-${process.pid}.txt`);
  mkdirSync(path.dirname(summaryFile), { recursive: true });
  const args = [
    "--test",
    `--test-concurrency=${phase.concurrency ?? Number(process.env.TEST_CONCURRENCY ?? 3)}`,
    "--test-timeout=120000",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${path.join(scriptsDir, "summary-reporter.ts")}`,
    `--test-reporter-destination=${summaryFile}`,
    ...phase.patterns,
  ];
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      env: {
        // Node's compile cache (the stripped TypeScript and V8's code): every test file and the
        // services it starts load the same modules again, and with it each spends about 0.7 CPU-s less.
        NODE_COMPILE_CACHE: path.join(scriptsDir, "..", "var", "node-compile-cache"),
        ...process.env,
        ...options.env,
        NODE_ENV: "test",
      },
      stdio: "inherit",
    });
    child.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  let summary = "";
  try {
    summary = readFileSync(summaryFile, "utf8");
  } catch {}
  rmSync(summaryFile, { force: true });
  return { code, summary };
}
