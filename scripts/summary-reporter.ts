/**
 * A node:test reporter that writes one closing line, `N passed, N failed`, counting tests (not
 * suites), so the test command always ends with the same summary whatever ran. A suite counts as
 * one failure only when it failed itself (a before or after hook threw, as a system's teardown
 * does when the NATS server refused its traffic), not because its tests did.
 */
interface TestEvent {
  type: string;
  data: {
    details?: { type?: string; error?: { failureType?: string } };
    skip?: unknown;
    todo?: unknown;
    name?: string;
    file?: string;
  };
}

export default async function* summaryReporter(source: AsyncIterable<TestEvent>) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures: string[] = [];
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const suite = event.data.details?.type === "suite";
    if (suite && (event.type === "test:pass" || event.data.details?.error?.failureType === "subtestsFailed")) continue;
    if (event.data.skip || event.data.todo) skipped++;
    else if (event.type === "test:pass") passed++;
    else {
      failed++;
      failures.push(`${event.data.file ?? ""} › ${event.data.name ?? ""}`);
    }
  }
  if (failures.length > 0) yield `failed tests:\n${failures.map((f) => `  ✖ ${f}`).join("\n")}\n`;
  yield `tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`;
}
