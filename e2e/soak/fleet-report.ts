/** The fleet soak's report as the console shows it and as e2e/RESULTS.md keeps it. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { root } from "../../scripts/system.ts";
import { type FleetReport, heapText, type Percentiles } from "./fleet-soak.ts";

const SERVICES = ["delivery-api", "geo-ingest", "pricing", "webhook-dispatcher", "console"];

/** CPU model, cores and memory, from /proc. */
function machine(): string {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown CPU";
  const cores = cpuinfo.match(/^processor/gm)?.length ?? 0;
  const memKb = Number(/^MemTotal:\s+(\d+)/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0);
  return `${cores} cores (${model}), ${Math.round(memKb / 1024 / 1024)} GB of memory`;
}

/** The commit the run measured, and whether the tree held changes beyond it. */
function commit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: root,
      encoding: "utf8",
    });
    return dirty.trim() ? `${sha} with uncommitted changes` : sha;
  } catch {
    return "unknown (no git)";
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const statuses = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([status, n]) => `${status}: ${n}`)
    .join(", ");

function latencyRow(name: string, p: Percentiles): string[] {
  return [name, String(p.count), String(p.p50), String(p.p99), String(p.max)];
}

/**
 * A Markdown table laid out as the repository's formatter (biome) lays it out, so a run's section
 * passes `npm run lint` as written: every cell padded to its column's width, the first column
 * left-aligned and the others right-aligned.
 */
function markdownTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`)).join(" | ")} |`;
  return [line(header), rule, ...rows.map(line)];
}

/** The lines that say what was measured and whether it held (console and file alike). */
export function summaryLines(report: FleetReport): string[] {
  const { trackers, positions, disk, options } = report;
  const lines: string[] = [];
  const generatorCore = ((trackers.cpuMs / 1000 / report.loadSeconds) * 100).toFixed(0);
  lines.push(
    `positions offered: ${trackers.sent} of ${trackers.due} due (${Math.round(trackers.sent / report.loadSeconds)}/s for ${options.trackers} trackers at 1 Hz; ${trackers.dropped} never sent, having waited over 10 s for a connection); answers ${statuses(trackers.statuses)}`,
    `load generator (its own process): ${generatorCore}% of one core, send lag p99 ${trackers.lagP99Ms} ms (max ${trackers.lagMaxMs}), own timer delay p99 ${trackers.loopDelayP99Ms} ms, at most ${trackers.connections} connections`,
  );
  lines.push(
    `positions stored: ${positions.stored} rows for ${positions.ok} answered 200 (counted per tracker): ${positions.missing} missing over ${positions.trackersShort} trackers, ${positions.unanswered} stored whose answer never came, ${positions.inactive} answered 200 unstored (inactive)`,
  );
  for (const e of report.events) {
    lines.push(
      `events of account ${e.account}: ${e.outbox} in the outbox, ${e.received} requests at its receiver: ${e.missing} missing, ${e.duplicates} duplicates, ${e.unknown} unknown webhook-ids`,
    );
  }
  lines.push(`events all at their receivers ${report.eventsSettledMs} ms after the last order call was answered`);
  const refused = Object.entries(report.orderRefusals)
    .sort((a, b) => b[1].count - a[1].count)
    .map(([key, r]) => `${key}: ${r.count} (first: ${r.example})`);
  lines.push(`order calls refused or unanswered: ${refused.length ? refused.join("; ") : "none"}`);
  const { memory } = report;
  for (const v of memory.verdicts) {
    const ratio = (a: number, b: number) => (b ? (a / b).toFixed(2) : "-");
    const early =
      memory.earlyWindow === memory.referenceWindow
        ? ""
        : `${v.earlyMb} MB over ${memory.earlyWindow} (${ratio(v.finalMb, v.earlyMb)}× to the end), `;
    lines.push(
      `${v.held ? "flat" : "GREW"}: ${v.service} median RSS ${early}${v.referenceMb} MB over ${memory.referenceWindow}, ${v.finalMb} MB over ${memory.finalWindow} (${ratio(v.finalMb, v.referenceMb)}×; bound ${options.memoryGrowthBound}×)`,
    );
  }
  const grown = disk.bytesAfter - disk.bytesBefore;
  const perRow = disk.rowsStored ? grown / disk.rowsStored : 0;
  const storedPerSecond = disk.rowsStored / report.loadSeconds;
  lines.push(
    `positions on disk (${disk.storage}): ${mb(disk.bytesBefore)} → ${mb(disk.bytesAfter)} MB for ${disk.rowsStored} rows, ${perRow.toFixed(0)} bytes per position with its indexes; ` +
      `${((perRow * storedPerSecond * 3600) / 1024 ** 3).toFixed(2)} GB per hour at the ${storedPerSecond.toFixed(0)}/s stored here, ` +
      `${((perRow * options.trackers * 3600) / 1024 ** 3).toFixed(2)} GB per hour for ${options.trackers} trackers at 1 Hz`,
    `TimescaleDB: ${disk.compression}`,
  );
  lines.push(
    report.failures.length === 0 ? "fleet soak: passed" : `fleet soak: FAILED (${report.failures.join("; ")})`,
  );
  return lines;
}

/** The section of e2e/RESULTS.md. */
export function resultsSection(report: FleetReport): string {
  const { options } = report;
  const ops = report.operations;
  const md: string[] = [
    "## Fleet soak (`npm run soak -- --profile fleet`)",
    "",
    `Run ${report.startedAt} on ${machine()}, Node ${process.version}, commit ${commit()}.`,
    `Load average ${report.loadAverageBefore} before, ${report.loadAverageAfter} after: the machine was shared with other work during the run (the busy column below is the whole machine).`,
    "",
    `The whole system (the five services as processes, as \`npm start\` and the e2e harness run them, on a NATS server of its own with one user per service and a fresh database on the machine's PostgreSQL), booted in ${(report.bootMs / 1000).toFixed(0)} s. ` +
      `${options.trackers} vehicles, each with a messenger and a round of its own, started, and a tracker of one of three providers with its own X-Provider-Token, set up through the operator API in ${(report.setupMs / 1000).toFixed(0)} s. ` +
      `Then for ${Math.round(report.loadSeconds)} s: every tracker posting a position once a second (open loop, the fleet's clocks spread over the second), ` +
      `${options.createsPerSecond} creates/s, of which 3 in 10 modified, 1 in 10 cancelled, 1 in 10 modified then cancelled, 3 in 10 put on a vehicle's round and taken to delivered task by task (${options.stepMs / 1000} s a step), ` +
      `and every event to one webhook receiver per client account (${report.events.length}).`,
    "",
    ...markdownTable(
      ["Operation", "Count", "p50 ms", "p99 ms", "max ms"],
      [
        latencyRow("position POST, from when it was due", ops["position POST"] as Percentiles),
        latencyRow("position POST, from when it was sent", ops["position POST, from sent"] as Percentiles),
        ...["create", "update", "cancel", "round add", "task start", "task complete"].map((name) =>
          latencyRow(name, ops[name] as Percentiles),
        ),
        latencyRow("webhook delivery delay (occurred_at → receiver)", report.webhookDelay),
      ],
    ),
    "",
    ...summaryLines(report).map((line) => `- ${line}`),
    "",
    "Every 10 s (memory in MB, RSS/V8 heap in use; CPU in % of one core, pg = the backends of the soak's database; busy = the whole machine, % of all cores; api positions read/s: the tracker positions delivery-api took in, and the age of the one it holds per round (median/oldest, s; rounds with none yet); trackers: positions sent and answered 200 per second, p99 ms from when due):",
    "",
  ];
  const header = [
    "t s",
    ...SERVICES.map((name) => `${name} MB`),
    ...SERVICES.map((name) => `${name} CPU`),
    "pg CPU",
    "load",
    "busy %",
    "outbox",
    "webhook queue",
    "api positions read/s",
    "age p50/max s",
    "none",
    "trackers sent/s",
    "200/s",
    "p99 ms",
  ];
  const rows = report.samples.map((s, i) => {
    const w = i > 0 ? report.windows[i - 1] : undefined;
    return [
      String(s.atSeconds),
      ...SERVICES.map((n) => `${(s.rssMb[n] ?? 0).toFixed(0)}/${heapText(s.heapMb[n])}`),
      ...SERVICES.map((n) => String(s.cpuPercent[n] ?? 0)),
      String(s.cpuPercent.postgres ?? 0),
      s.load1.toFixed(1),
      String(s.machineBusyPercent),
      String(s.outboxUnpublished),
      String(s.webhookQueue),
      String(s.positionsReadPerSecond),
      `${s.trackerAgeP50S}/${s.trackerAgeMaxS}`,
      String(s.roundsWithoutTracker),
      String(w?.offeredPerSecond ?? ""),
      String(w?.okPerSecond ?? ""),
      String(w?.p99Ms ?? ""),
    ];
  });
  md.push(...markdownTable(header, rows));
  return md.join("\n");
}
