/**
 * `npm run soak [-- --profile steady|fleet] [--minutes N]`: the whole system under load for a
 * while, then checked for loss and for memory or backlogs that grow; each profile rewrites its own
 * section of e2e/RESULTS.md and exits 1 when something did not hold.
 *   - steady (the default; steady-soak.ts): 20 creates/s, 10 updates/s, 45 positions/s from 60
 *     vehicles, webhooks, for 10 minutes (or SOAK_SECONDS);
 *   - fleet (fleet-soak.ts): a fleet of trackers (--trackers, 5,000) each posting once a second,
 *     20 creates/s (--creates) with their updates, cancellations and rounds, webhooks, for
 *     10 minutes.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { root } from "../../scripts/system.ts";
import { writeResultsSection } from "../src/results.ts";
import { resultsSection, summaryLines } from "./fleet-report.ts";
import { runFleetSoak } from "./fleet-soak.ts";
import { runSteadySoak } from "./steady-soak.ts";

const { values } = parseArgs({
  options: {
    profile: { type: "string", default: "steady" },
    minutes: { type: "string" },
    trackers: { type: "string", default: "5000" },
    creates: { type: "string", default: "20" },
  },
});
const number = (name: string, value: string | undefined) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`soak: --${name} must be a positive number, not ${value}\n`);
    process.exit(2);
  }
  return n;
};
const seconds = values.minutes === undefined ? undefined : Math.round(number("minutes", values.minutes) * 60);
const say = (line: string) => process.stdout.write(`${line}\n`);

if (values.profile === "steady") {
  process.exit(await runSteadySoak(seconds ?? Number(process.env.SOAK_SECONDS ?? 600)));
} else if (values.profile === "fleet") {
  const logDir = path.join(root, "var", "soak-logs");
  rmSync(logDir, { recursive: true, force: true });
  const report = await runFleetSoak({
    trackers: Math.round(number("trackers", values.trackers)),
    seconds: seconds ?? 600,
    createsPerSecond: number("creates", values.creates),
    sampleSeconds: 10,
    stepMs: 2000,
    memoryGrowthBound: 1.2,
    drainTimeoutMs: 120_000,
    logDir,
    say,
  });
  for (const line of summaryLines(report)) say(line);
  writeResultsSection("fleet", resultsSection(report));
  say("soak: the fleet section of e2e/RESULTS.md is written");
  process.exit(report.failures.length === 0 ? 0 : 1);
} else {
  process.stderr.write(`soak: --profile must be steady or fleet, not ${values.profile}\n`);
  process.exit(2);
}
