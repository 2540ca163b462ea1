/**
 * The fleet soak in one minute, as `npm test` runs it: the run of `npm run soak -- --profile fleet`
 * (fleet-soak.ts), scaled to CI_TRACKERS trackers. Not 5,000: setting the fleet up through the
 * operator API (a messenger, a vehicle, a round and its start per tracker) took 47–232 s for
 * 5,000 on this shared 2-core machine, more than the test's budget of about 90 s by itself, and
 * the system did not keep up with 5,000 positions a second here (e2e/RESULTS.md, the fleet
 * section), so in a CI run it would measure the neighbours. The load generator is not the limit:
 * it sent 5,000 a second for 3 minutes at 14% of one core.
 * What a user would notice is asserted, not timings: nothing lost, memory not running away.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { summaryLines } from "./fleet-report.ts";
import { runFleetSoak } from "./fleet-soak.ts";

const CI_TRACKERS = 1000;
const SECONDS = 60;

test(`fleet soak, 1 minute: ${CI_TRACKERS} trackers at 1 Hz and 20 creates/s lose nothing and hold their memory`, {
  // About 90 s on a quiet machine; 100–260 s were measured here under load averages of 8–29.
  timeout: 600_000,
}, async (t) => {
  const report = await runFleetSoak({
    trackers: CI_TRACKERS,
    seconds: SECONDS,
    createsPerSecond: 20,
    sampleSeconds: 10,
    stepMs: 2000,
    // A minute is short: the heaps are still growing to their working size between its middle
    // and last thirds (up to 1.14× in runs here). This bound catches only a gross leak, some
    // kilobytes kept per request; the 10-minute soak's 1.2× between the minute before its
    // midpoint and its last is the real check.
    memoryGrowthBound: 1.5,
    drainTimeoutMs: 60_000,
    say: (line) => t.diagnostic(line),
  });
  for (const line of summaryLines(report)) t.diagnostic(line);

  // The load reached the system. Not all of it need be answered: on a machine shared with a
  // whole CI run the system may not keep up (a run here under a load average of 27 stored 56% of
  // the positions due); what is asserted is that nothing answered is lost.
  assert.ok(
    report.positions.ok >= report.trackers.due / 10,
    `${report.positions.ok} of ${report.trackers.due} positions answered 200`,
  );
  assert.ok((report.operations.create?.count ?? 0) >= (SECONDS * 20) / 2, "the creates were answered");
  assert.ok((report.operations["task complete"]?.count ?? 0) > 0, "deliveries went through their rounds");
  for (const e of report.events) assert.ok(e.outbox > 0, `account ${e.account} had events`);

  // Nothing lost, nothing twice, memory flat.
  assert.equal(report.positions.missing, 0, "every position answered 200 is stored");
  assert.equal(report.positions.inactive, 0, "no position answered 200 without being stored");
  assert.deepEqual(
    report.events.filter((e) => e.missing + e.duplicates + e.unknown > 0),
    [],
    "every event reached its account's receiver exactly once",
  );
  assert.deepEqual(report.failures, []);
});
