/**
 * The fleet soak: the whole system (all five services as processes, as the e2e harness and
 * `npm start` run them, on a fresh database and a NATS server of its own) under a tracker fleet
 * and a steady flow of deliveries, for a fixed time, then checked for loss:
 *   - `trackers` vehicles, each in an active round of its own, posting a position once a second
 *     (tracker-fleet.ts, its own process);
 *   - `createsPerSecond` deliveries with their updates, cancellations and rounds (fleet-orders.ts);
 *   - a webhook receiver per client account, verifying every request (standardwebhooks).
 * Every `sampleSeconds` it samples memory and CPU per service and what is waiting (fleet-probes.ts).
 * At the end: every position answered 200 must be in the table (rows counted per tracker against
 * its 200s), every event in the outbox must have reached its account's receiver exactly once
 * (webhook-ids counted per receiver), and each service's memory must be flat (median of the last
 * window against that of an early one). The result is a FleetReport; fleet-report.ts renders it.
 */

import type pg from "pg";
import { type SeededAccount, seedAccounts } from "../src/client.ts";
import { GEO_OPS_TOKEN } from "../src/operator.ts";
import { bootSystemUnderTest } from "../src/system.ts";
import { registerReceiver, startWebhookReceiver, type WebhookReceiver } from "../src/webhook-receiver.ts";
import { type OrderCall, type Orders, refusals, startOrders } from "./fleet-orders.ts";
import { type FleetProbes, type FleetSample, loadAverage, startFleetProbes } from "./fleet-probes.ts";
import { metricValue, setUpFleet } from "./fleet-setup.ts";
import { startTrackerFleet, type TrackerFleet, type TrackerFleetResult, type TrackerWindow } from "./tracker-fleet.ts";

export interface FleetSoakOptions {
  trackers: number;
  seconds: number;
  createsPerSecond: number;
  sampleSeconds: number;
  /** Wait between two steps of a delivery's life (update, cancel, each task move). */
  stepMs: number;
  /** Memory is flat when the last minute's median RSS is at most this × that of the minute before the midpoint. */
  memoryGrowthBound: number;
  /** How long the events may take to all arrive after the load. */
  drainTimeoutMs: number;
  logDir?: string;
  /** Each progress line, as it happens. */
  say: (line: string) => void;
}

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface MemoryVerdict {
  service: string;
  /** Median RSS of the second minute (of the middle third in a short run). */
  earlyMb: number;
  referenceMb: number;
  finalMb: number;
  held: boolean;
}

export interface FleetReport {
  options: Omit<FleetSoakOptions, "say" | "logDir">;
  startedAt: string;
  loadAverageBefore: string;
  loadAverageAfter: string;
  bootMs: number;
  setupMs: number;
  loadSeconds: number;
  samples: FleetSample[];
  windows: TrackerWindow[];
  trackers: TrackerFleetResult & { okPerTracker: [] };
  operations: Record<string, Percentiles>;
  orderRefusals: Record<string, { count: number; example: string }>;
  webhookDelay: Percentiles;
  positions: {
    ok: number;
    stored: number;
    /** 200s without a row, summed over trackers: lost positions. */
    missing: number;
    /** Rows beyond the tracker's 200s (positions stored whose answer never came). */
    unanswered: number;
    trackersShort: number;
    /** geo-ingest's count of positions answered 200 without being stored (vehicle not in an active round). */
    inactive: number;
  };
  events: Array<{
    account: number;
    outbox: number;
    received: number;
    missing: number;
    duplicates: number;
    unknown: number;
  }>;
  eventsSettledMs: number;
  memory: { earlyWindow: string; referenceWindow: string; finalWindow: string; verdicts: MemoryVerdict[] };
  disk: {
    storage: string;
    bytesBefore: number;
    bytesAfter: number;
    rowsStored: number;
    compression: string;
  };
  /** Services that were no longer running at the end: a crash (their log is in logDir). */
  exited: string[];
  failures: string[];
}

export async function runFleetSoak(options: FleetSoakOptions): Promise<FleetReport> {
  const { say } = options;
  const loadAverageBefore = loadAverage();
  const bootStarted = Date.now();
  const system = await bootSystemUnderTest({ GEO_OPS_TOKEN }, { logDir: options.logDir });
  const receivers: WebhookReceiver[] = [];
  // What runs in the background, stopped whatever happens.
  let trackers: TrackerFleet | undefined;
  let orders: Orders | undefined;
  let probes: FleetProbes | undefined;
  try {
    const bootMs = Date.now() - bootStarted;
    const accounts = seedAccounts(system);
    const api = system.url("delivery-api");
    const geo = system.url("geo-ingest");
    for (const account of accounts) {
      const receiver = await startWebhookReceiver();
      await registerReceiver(api, { "x-user-email": account.email, "x-user-token": account.token }, receiver);
      receivers.push(receiver);
    }
    say(`fleet soak: system ready in ${bootMs} ms; setting up ${options.trackers} vehicles, messengers and rounds`);
    const setupStarted = Date.now();
    const fleet = await setUpFleet(system.opsUrl, geo, options.trackers);
    const setupMs = Date.now() - setupStarted;
    say(`fleet soak: fleet ready in ${setupMs} ms; load for ${options.seconds} s`);

    const started = Date.now();
    probes = await startFleetProbes(system, started);
    const storage = await positionsStorage(probes.db);
    const samples: FleetSample[] = [await probes.sample()];
    const windows: TrackerWindow[] = [];
    trackers = startTrackerFleet({
      port: Number(new URL(geo).port),
      trackers: fleet,
      startAt: started,
      durationMs: options.seconds * 1000,
      maxConnections: 512,
      timeoutMs: 10_000,
    });
    orders = startOrders({
      api,
      opsUrl: system.opsUrl,
      accounts,
      rounds: fleet.map((v) => v.roundId),
      createsPerSecond: options.createsPerSecond,
      stepMs: options.stepMs,
    });
    say(sampleHeader());
    say(sampleRow(samples[0] as FleetSample, undefined, []));
    let windowStart = started;
    while (Date.now() - started < options.seconds * 1000) {
      const next = started + samples.length * options.sampleSeconds * 1000;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, Math.min(next, started + options.seconds * 1000) - Date.now())),
      );
      const [sample, window] = await Promise.all([probes.sample(), trackers.window()]);
      samples.push(sample);
      if (window) windows.push(window);
      say(
        sampleRow(
          sample,
          window,
          orders.calls.filter((c) => c.at >= windowStart),
        ),
      );
      windowStart = Date.now();
    }
    orders.halt();
    const loadSeconds = (Date.now() - started) / 1000;
    const trackerResult = await trackers.done;
    await orders.settle();
    say(`fleet soak: load ended; waiting for every event to reach its receiver`);

    const settleStarted = Date.now();
    const settled = await waitForEvents(probes.db, accounts, receivers, options.drainTimeoutMs);
    const eventsSettledMs = Date.now() - settleStarted;
    const events = accounts.map((account, i) =>
      eventTally(account, settled.outbox.get(account.account_id) ?? [], receivers[i] as WebhookReceiver),
    );

    const positions = await checkPositions(
      probes.db,
      fleet.map((v) => v.externalId),
      trackerResult.okPerTracker,
    );
    positions.inactive = await metricValue(geo, "geo_positions_total", 'outcome="inactive"');
    const bytesAfter = (await positionsStorage(probes.db)).bytes;
    const compression = storage.timescale
      ? await timescaleCompression(probes.db)
      : "TimescaleDB absent on this PostgreSQL: no compression ratio";

    const memory = memoryVerdicts(samples, options);
    const exited = system.services
      .filter((service) => service.child.exitCode !== null || service.child.signalCode !== null)
      .map((service) => `${service.spec.name} (exit ${service.child.exitCode ?? service.child.signalCode})`);
    const webhookDelay = percentiles(
      receivers.flatMap((r) =>
        r
          .firstArrivals()
          .map((a) => a.receivedAt - Date.parse((a.event as unknown as { occurred_at: string }).occurred_at)),
      ),
    );
    const answered = Object.values(trackerResult.statuses).reduce((sum, n) => sum + n, 0);
    const operations: Record<string, Percentiles> = {
      "position POST": {
        count: answered,
        p50: trackerResult.p50Ms,
        p99: trackerResult.p99Ms,
        max: trackerResult.maxMs,
      },
      "position POST, from sent": {
        count: answered,
        p50: trackerResult.sentP50Ms,
        p99: trackerResult.sentP99Ms,
        max: trackerResult.sentMaxMs,
      },
    };
    for (const operation of ["create", "update", "cancel", "round add", "task start", "task complete"]) {
      operations[operation] = percentiles(
        orders.calls.filter((c) => c.operation === operation && c.status >= 200 && c.status < 300).map((c) => c.ms),
      );
    }
    const { okPerTracker: _perTracker, ...trackerFigures } = trackerResult;
    const report: FleetReport = {
      options: {
        trackers: options.trackers,
        seconds: options.seconds,
        createsPerSecond: options.createsPerSecond,
        sampleSeconds: options.sampleSeconds,
        stepMs: options.stepMs,
        memoryGrowthBound: options.memoryGrowthBound,
        drainTimeoutMs: options.drainTimeoutMs,
      },
      startedAt: new Date(started).toISOString(),
      loadAverageBefore,
      loadAverageAfter: loadAverage(),
      bootMs,
      setupMs,
      loadSeconds,
      samples,
      windows,
      trackers: { ...trackerFigures, okPerTracker: [] },
      operations,
      orderRefusals: refusals(orders.calls),
      webhookDelay,
      positions,
      events,
      eventsSettledMs,
      memory,
      disk: {
        storage: storage.timescale
          ? `TimescaleDB ${storage.timescale} hypertable`
          : "native daily partitions (no TimescaleDB)",
        bytesBefore: storage.bytes,
        bytesAfter,
        rowsStored: positions.stored,
        compression,
      },
      exited,
      failures: [],
    };
    report.failures = judge(report);
    return report;
  } finally {
    trackers?.stop();
    orders?.halt();
    await orders?.settle();
    await probes?.close();
    for (const receiver of receivers) await receiver.close();
    await system.teardown();
  }
}

/** What must hold; each failure as a sentence. */
function judge(report: FleetReport): string[] {
  const failures: string[] = [];
  for (const service of report.exited) failures.push(`${service} stopped during the run`);
  const { positions } = report;
  if (positions.missing > 0)
    failures.push(
      `${positions.missing} positions answered 200 are not stored (${positions.trackersShort} trackers short)`,
    );
  if (positions.inactive > 0)
    failures.push(`${positions.inactive} positions were answered 200 without being stored (inactive)`);
  for (const e of report.events) {
    if (e.missing > 0)
      failures.push(`account ${e.account}: ${e.missing} of ${e.outbox} events never reached its receiver`);
    if (e.duplicates > 0) failures.push(`account ${e.account}: ${e.duplicates} events arrived more than once`);
    if (e.unknown > 0) failures.push(`account ${e.account}: ${e.unknown} webhook-ids the outbox does not hold`);
  }
  for (const m of report.memory.verdicts.filter((v) => !v.held)) {
    failures.push(
      `${m.service} memory grew: median ${m.finalMb} MB over ${report.memory.finalWindow} vs ${m.referenceMb} MB over ${report.memory.referenceWindow} (bound ${report.options.memoryGrowthBound}×)`,
    );
  }
  return failures;
}

/**
 * Memory is judged on medians, which one garbage collection cannot move: the last minute against
 * the minute before the run's midpoint. Not against the second minute: a Node process's heap
 * grows to its working size, up to its bound (--max-old-space-size), over minutes before the
 * full collections hold it there, so early growth is no leak; what must not happen is growth that
 * goes on in the second half. The second minute's median is reported beside it. A run shorter
 * than three minutes has no such minutes: its middle third against its last.
 */
function memoryVerdicts(samples: FleetSample[], options: FleetSoakOptions): FleetReport["memory"] {
  const total = options.seconds;
  const long = total >= 180;
  const half = Math.round(total / 2);
  const [refFrom, refTo] = long ? [half - 60, half] : [Math.round(total / 3), Math.round((2 * total) / 3)];
  const [earlyFrom, earlyTo] = long ? [60, 120] : [refFrom, refTo];
  const finalFrom = long ? total - 60 : refTo;
  const within = (from: number, to: number) => samples.filter((s) => s.atSeconds >= from && s.atSeconds < to);
  const early = within(earlyFrom, earlyTo);
  const reference = within(refFrom, refTo);
  const final = samples.filter((s) => s.atSeconds >= finalFrom);
  const verdicts = Object.keys(samples[0]?.rssMb ?? {}).map((service) => {
    const of = (window: FleetSample[]) => median(window.map((s) => s.rssMb[service] ?? 0));
    const referenceMb = of(reference);
    const finalMb = of(final);
    return {
      service,
      earlyMb: of(early),
      referenceMb,
      finalMb,
      held: finalMb <= options.memoryGrowthBound * referenceMb,
    };
  });
  return {
    earlyWindow: `${earlyFrom}–${earlyTo} s`,
    referenceWindow: `${refFrom}–${refTo} s`,
    finalWindow: `${finalFrom}–${total} s`,
    verdicts,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : Math.round(((sorted[mid - 1] as number) + (sorted[mid] as number)) * 5) / 10;
}

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] ?? 0;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
}

/** Rows per tracker against its 200s. */
async function checkPositions(db: pg.Pool, externalIds: string[], okPerTracker: number[]) {
  const rows = await db.query<{ vehicle: string; n: number }>(
    "select vehicle_external_id as vehicle, count(*)::int as n from geo.vehicle_positions group by 1",
  );
  const stored = new Map(rows.rows.map((r) => [r.vehicle, r.n]));
  let missing = 0;
  let unanswered = 0;
  let trackersShort = 0;
  let storedTotal = 0;
  externalIds.forEach((id, i) => {
    const ok = okPerTracker[i] ?? 0;
    const n = stored.get(id) ?? 0;
    storedTotal += n;
    if (n < ok) {
      missing += ok - n;
      trackersShort++;
    } else unanswered += n - ok;
  });
  return {
    ok: okPerTracker.reduce((s, v) => s + v, 0),
    stored: storedTotal,
    missing,
    unanswered,
    trackersShort,
    inactive: 0,
  };
}

/** Waits until the outbox is all published and every account's events are at its receiver. */
async function waitForEvents(db: pg.Pool, accounts: SeededAccount[], receivers: WebhookReceiver[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.query<{ id: string; account_id: number; published: boolean }>(
      "select id::text as id, account_id::int as account_id, published_at is not null as published from delivery.outbox",
    );
    const outbox = new Map<number, string[]>();
    for (const row of rows.rows) outbox.set(row.account_id, [...(outbox.get(row.account_id) ?? []), row.id]);
    const complete = accounts.every((account, i) => {
      const received = new Set((receivers[i] as WebhookReceiver).received.map((r) => r.webhookId));
      return (outbox.get(account.account_id) ?? []).every((id) => received.has(id));
    });
    if ((complete && rows.rows.every((r) => r.published)) || Date.now() > deadline) return { outbox };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function eventTally(account: SeededAccount, outbox: string[], receiver: WebhookReceiver) {
  const counts = new Map<string, number>();
  for (const r of receiver.received) counts.set(r.webhookId, (counts.get(r.webhookId) ?? 0) + 1);
  const known = new Set(outbox);
  return {
    account: account.account_id,
    outbox: outbox.length,
    received: receiver.received.length,
    missing: outbox.filter((id) => !counts.has(id)).length,
    duplicates: [...counts.values()].reduce((sum, n) => sum + n - 1, 0),
    unknown: [...counts.keys()].filter((id) => !known.has(id)).length,
  };
}

/** The positions' size on disk, table, indexes and TOAST, over every partition or chunk. */
async function positionsStorage(db: pg.Pool): Promise<{ timescale: string | null; bytes: number }> {
  const extension = await db.query<{ v: string }>(
    "select extversion as v from pg_extension where extname = 'timescaledb'",
  );
  const timescale = extension.rows[0]?.v ?? null;
  const size = timescale
    ? "select hypertable_size('geo.vehicle_positions') as bytes"
    : "select coalesce(sum(pg_total_relation_size(relid)), 0) as bytes from pg_partition_tree('geo.vehicle_positions')";
  const bytes = Number((await db.query<{ bytes: string }>(size)).rows[0]?.bytes ?? 0);
  return { timescale, bytes };
}

/**
 * TimescaleDB's compression ratio of the soak's positions: every chunk compressed now (the policy
 * would after 2 days), then hypertable_compression_stats. Not run on this project's machines,
 * which have no TimescaleDB.
 */
async function timescaleCompression(db: pg.Pool): Promise<string> {
  await db.query("select compress_chunk(c, true) from show_chunks('geo.vehicle_positions') c");
  const stats = await db.query<{ before: string; after: string }>(
    `select before_compression_total_bytes as before, after_compression_total_bytes as after
       from hypertable_compression_stats('geo.vehicle_positions')`,
  );
  const before = Number(stats.rows[0]?.before ?? 0);
  const after = Number(stats.rows[0]?.after ?? 0);
  return after > 0
    ? `compression ratio ${(before / after).toFixed(1)}× (${before} → ${after} bytes)`
    : "no chunk compressed";
}

function sampleHeader(): string {
  return [
    "    t | rss/heap MB:  api     geo     pri      wh     con | cpu %: api geo pri  wh con  pg | load busy% | outbox wh-queue | api positions: pending read/s age p50/max s none",
    "      | trackers: offered/s 200/s other p50 p99 (sent p99) lag-p99 loop-p99 ms | orders: calls p99 ms refused",
  ].join("\n");
}

/** A heap figure, "-" when the service's /metrics did not answer. */
export function heapText(mb: number | undefined): string {
  return mb === undefined || mb < 0 ? "-" : String(mb);
}

function sampleRow(sample: FleetSample, window: TrackerWindow | null | undefined, calls: OrderCall[]): string {
  const rss = Object.entries(sample.rssMb)
    .map(([name, v]) => `${v.toFixed(0)}/${heapText(sample.heapMb[name])}`.padStart(7))
    .join(" ");
  const cpu = Object.values(sample.cpuPercent)
    .map((v) => String(v).padStart(3))
    .join(" ");
  let row = `${String(sample.atSeconds).padStart(5)} | ${rss} |       ${cpu} | ${sample.load1.toFixed(1).padStart(4)} ${String(sample.machineBusyPercent).padStart(5)} | ${String(sample.outboxUnpublished).padStart(6)} ${String(sample.webhookQueue).padStart(8)} | ${String(sample.positionsBacklog).padStart(22)} ${String(sample.positionsReadPerSecond).padStart(6)} ${sample.trackerAgeP50S}/${sample.trackerAgeMaxS} ${sample.roundsWithoutTracker}`;
  if (window) {
    let other = Object.entries(window.statuses)
      .filter(([status]) => status !== "200")
      .map(([status, n]) => `${status}:${n}`)
      .join(",");
    if (window.dropped) other += `${other ? "," : ""}unsent:${window.dropped}`;
    row += `\n      | trackers: ${window.offeredPerSecond} ${window.okPerSecond} ${other || "-"} ${window.p50Ms} ${window.p99Ms} (sent ${window.sentP99Ms}) ${window.lagP99Ms} ${window.loopDelayP99Ms}`;
  }
  if (calls.length > 0) {
    const refused = calls.filter((c) => c.status < 200 || c.status >= 300).length;
    row += ` | orders: ${calls.length} ${percentiles(calls.map((c) => c.ms)).p99} ${refused}`;
  }
  return row;
}
