/**
 * A node:test reporter that writes one closing line, `N passed, N failed`, counting tests (not
 * suites), so the test command always ends with the same summary whatever ran. A suite counts as
 * one failure only when it failed itself (a before or after hook threw, as a system's teardown
 * does when the NATS server refused its traffic), not because its tests did. Before it, the
 * slowest files (their top-level tests' time added up), to keep the run's length in view, and
 * the files whose process lived on long after their tests: a timer, socket or pool left open
 * holds a slot of the run doing nothing (one such file held 58 s).
 */
import path from "node:path";

interface TestEvent {
  type: string;
  data: {
    details?: { type?: string; duration_ms?: number; error?: { failureType?: string } };
    skip?: unknown;
    todo?: unknown;
    name?: string;
    file?: string;
    nesting?: number;
  };
}

const SLOWEST_SHOWN = 8;
/** A file's process outliving its tests by more than this is named; its before hooks count too. */
const LINGER_SHOWN_MS = 15_000;

export default async function* summaryReporter(source: AsyncIterable<TestEvent>) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures: string[] = [];
  const fileMs = new Map<string, number>();
  const lifetimeMs = new Map<string, number>();
  for await (const event of source) {
    // The file itself completes as a test named by its path: its process's whole life.
    const { name, file: eventFile } = event.data;
    if (event.type === "test:complete" && eventFile && name && path.resolve(process.cwd(), name) === eventFile) {
      lifetimeMs.set(eventFile, event.data.details?.duration_ms ?? 0);
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { file, nesting, details } = event.data;
    if (file && nesting === 0) fileMs.set(file, (fileMs.get(file) ?? 0) + (details?.duration_ms ?? 0));
    const suite = details?.type === "suite";
    if (suite && (event.type === "test:pass" || details?.error?.failureType === "subtestsFailed")) continue;
    if (event.data.skip || event.data.todo) skipped++;
    else if (event.type === "test:pass") passed++;
    else {
      failed++;
      failures.push(`${file ?? ""} › ${event.data.name ?? ""}`);
    }
  }
  const slowest = [...fileMs].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_SHOWN);
  if (slowest.length > 0) {
    const lines = slowest.map(([file, ms]) => `  ${Math.round(ms / 1000)} s ${path.relative(process.cwd(), file)}`);
    yield `slowest files:\n${lines.join("\n")}\n`;
  }
  const lingering = [...lifetimeMs]
    .map(([file, ms]) => {
      const tests = fileMs.get(file) ?? 0;
      return { file, ms, tests, after: ms - tests };
    })
    .filter(({ after }) => after > LINGER_SHOWN_MS)
    .sort((a, b) => b.after - a.after);
  if (lingering.length > 0) {
    const seconds = (ms: number) => Math.round(ms / 1000);
    const lines = lingering.map(
      ({ file, ms, tests, after }) =>
        `  ${seconds(after)} s ${path.relative(process.cwd(), file)} (lived ${seconds(ms)} s, tests ${seconds(tests)} s)`,
    );
    yield `files that lived on after their tests (a timer, socket or pool left open?):\n${lines.join("\n")}\n`;
  }
  if (failures.length > 0) yield `failed tests:\n${failures.map((f) => `  ✖ ${f}`).join("\n")}\n`;
  yield `tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`;
}
