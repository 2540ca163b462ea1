/**
 * The abuse suite's stage and its one rule. Each file of `e2e/abuse/` (named `<topic>.test.ts`;
 * not in e2e/test, whose files run in parallel) boots a stage (the running system, an attacker's
 * account, a bystander's account with a delivery under way and its vehicle's tracker in an
 * active round), then runs each attack inside `underAttack`: while the attack lasts, well-behaved
 * users keep calling (see bystanders.ts), and `assertBystandersUnharmed` checks what the issue
 * promises them:
 * - every service's `/livez` and the bystander shop's requests answer within 100 ms at p99;
 * - the bystander tracker's one position per second is answered 200, every time.
 * An answer's time leaves out the moments the machine itself stalled (bystanders.ts): they are
 * the host's, not the attack's, and they are printed with the figures.
 *
 * The abuse files run after every other test file, one at a time (scripts/test.ts), so that
 * what is measured is the attack's effect, not the neighbours' load.
 */
import assert from "node:assert/strict";
import os from "node:os";
import { Worker } from "node:worker_threads";
import type { ServiceSpec } from "../../scripts/system.ts";
import type { BystanderPlan, BystanderSamples, Sample, Stall } from "./bystanders.ts";
import { callRetrying503, clientHeaders, outboundDelivery, type SeededAccount, seedDemo } from "./client.ts";
import { GEO_OPS_TOKEN, type Operator, operator, type Round } from "./operator.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "./system.ts";

export interface AbuseStage {
  system: SystemUnderTest;
  api: string;
  geo: string;
  operator: Operator;
  attacker: SeededAccount;
  bystander: SeededAccount;
  /** The bystander's delivery, on the bystander tracker's round (started). */
  bystanderDeliveryId: number;
  round: Round;
  teardown(): Promise<void>;
}

/**
 * Boots the system, with the client API's rate limits as in production, and sets the bystanders
 * up; `extraEnv` is passed to every service.
 */
export async function bootAbuseStage(extraEnv: Record<string, string> = {}): Promise<AbuseStage> {
  const system = await bootSystemUnderTest({ GEO_OPS_TOKEN, ...extraEnv }, { productionLimits: true });
  const [attacker, bystander] = seedDemo(system).accounts as [SeededAccount, SeededAccount];
  const api = system.url("delivery-api");
  const geo = system.url("geo-ingest");
  const created = await callRetrying503(
    `${api}/api/v2/deliveries`,
    "POST",
    clientHeaders(bystander),
    outboundDelivery(bystander, "bystander-order"),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const bystanderDeliveryId = (created.body as { id: number }).id;
  const ops = operator(system.opsUrl, geo);
  const round = await ops.startRound([bystanderDeliveryId]);
  // The tracker's first position waits until geo-ingest knows the round (stored, not just 200).
  await ops.storedPosition(round, 48.85, 2.35, new Date());
  // The next position may come a second later at the soonest.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  return {
    system,
    api,
    geo,
    operator: ops,
    attacker,
    bystander,
    bystanderDeliveryId,
    round,
    teardown: () => system.teardown(),
  };
}

export interface AttackReport<T> {
  /** What the attack returned. */
  result: T;
  bystanders: BystanderSamples;
  /** How long the attack ran. */
  ms: number;
}

/**
 * The shortest time the bystanders are watched, from the attack's start: 120 samples of each
 * (every 50 ms), so that a p99 is the second-slowest answer, not the slowest (with fewer than
 * 100 samples, the nearest-rank p99 is the maximum).
 */
const MIN_WATCH_MS = 6000;

/**
 * Runs `attack` while the bystanders call the system; returns the attack's result and their
 * samples. The bystanders start before the attack and stop when it ends, or 6 s after it
 * started if it ended sooner.
 */
export async function underAttack<T>(stage: AbuseStage, attack: () => Promise<T>): Promise<AttackReport<T>> {
  const livez = Object.fromEntries(
    (["delivery-api", "geo-ingest", "pricing", "webhook-dispatcher"] as ServiceSpec["name"][]).map((name) => [
      name,
      `${stage.system.url(name)}/livez`,
    ]),
  );
  const plan: BystanderPlan = {
    livez,
    client: {
      url: `${stage.api}/api/v2/deliveries/${stage.bystanderDeliveryId}`,
      headers: clientHeaders(stage.bystander),
    },
    tracker: {
      url: `${stage.geo}/external/vehicles/${encodeURIComponent(stage.round.vehicle.externalId)}/geolocations`,
      provider: stage.round.vehicle.provider,
    },
  };
  const worker = new Worker(new URL("./bystanders.ts", import.meta.url), { workerData: plan });
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  const message = () => Promise.race([new Promise<unknown>((resolve) => worker.once("message", resolve)), failed]);
  await message();
  // The attacker stands for clients on other machines: here it shares the system's two cores, so
  // its own work runs at the lowest CPU priority (this thread only: the services and the
  // bystanders' thread started before keep theirs), and what is measured is the system's answer.
  os.setPriority(19);
  const started = performance.now();
  let result: T;
  let ms: number;
  try {
    result = await attack();
  } finally {
    os.setPriority(0);
    ms = performance.now() - started;
    // A short attack is watched for its aftermath too, so that every bystander has samples enough.
    if (ms < MIN_WATCH_MS) await new Promise((resolve) => setTimeout(resolve, MIN_WATCH_MS - ms));
    worker.postMessage("stop");
  }
  const bystanders = (await message()) as BystanderSamples;
  await worker.terminate();
  return { result, bystanders, ms };
}

export interface FloodOptions {
  /** Loops sending at once, each its next request as soon as it has its answer. */
  senders: number;
  /** Stop once this many requests are sent... */
  total?: number;
  /** ...or once this long has passed. */
  forMs?: number;
  /** Each sender's pause after each answer. */
  pauseMs?: number;
}

/** The attacker's flood: `send(n)` for n = 0, 1, ... from `senders` loops; the answers in order of arrival. */
export async function flood<T>(options: FloodOptions, send: (n: number) => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  const total = options.total ?? Number.POSITIVE_INFINITY;
  const end = performance.now() + (options.forMs ?? Number.POSITIVE_INFINITY);
  let n = 0;
  await Promise.all(
    Array.from({ length: options.senders }, async () => {
      while (n < total && performance.now() < end) {
        answers.push(await send(n++));
        if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
      }
    }),
  );
  return answers;
}

/** How many answers had each status. */
export function countStatuses(statuses: number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return counts;
}

/** The p-th percentile (0-100) of the samples' times, by the nearest-rank method. */
function percentile(samples: Sample[], p: number): number {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** The sample's time without the machine's stalls that overlap it. */
function withoutStalls(sample: Sample, stalls: Stall[]): Sample {
  const end = sample.start + sample.ms;
  let stalled = 0;
  for (const stall of stalls) {
    stalled += Math.max(0, Math.min(end, stall.end) - Math.max(sample.start, stall.end - stall.ms));
  }
  return stalled === 0 ? sample : { ...sample, ms: sample.ms - stalled };
}

/** The samples' times as the system took them: the machine's stalls left out. */
function systemTimes(samples: BystanderSamples): Omit<BystanderSamples, "stalls"> {
  const of = (list: Sample[]) => list.map((sample) => withoutStalls(sample, samples.stalls));
  return {
    livez: Object.fromEntries(Object.entries(samples.livez).map(([service, list]) => [service, of(list)])),
    client: of(samples.client),
    tracker: of(samples.tracker),
  };
}

/**
 * One line of figures for the test's output: p50/p99/max per bystander (the machine's stalls left
 * out), the stalls, and the tracker's answers.
 */
export function describeBystanders(samples: BystanderSamples): string {
  return describeTimes(systemTimes(samples), samples.stalls);
}

function describeTimes(timed: Omit<BystanderSamples, "stalls">, stalls: Stall[]): string {
  const figures = (list: Sample[]) =>
    `n=${list.length} p50=${percentile(list, 50).toFixed(1)} p99=${percentile(list, 99).toFixed(1)} max=${percentile(list, 100).toFixed(1)} ms`;
  const livez = Object.entries(timed.livez).map(([service, list]) => `livez ${service}: ${figures(list)}`);
  const tracker = timed.tracker.map((s) => s.status).join(",");
  const stalled = stalls.reduce((sum, stall) => sum + stall.ms, 0);
  const longest = stalls.reduce((most, stall) => Math.max(most, stall.ms), 0);
  const machine = `machine stalls: ${stalls.length}, ${stalled.toFixed(0)} ms in all, longest ${longest.toFixed(0)} ms`;
  return [...livez, `client GET: ${figures(timed.client)}`, `tracker: [${tracker}]`, machine].join("; ");
}

const P99_LIMIT_MS = 100;

/**
 * What every attack must leave untouched: `/livez` of every service and the bystander shop's
 * requests answered (200) within 100 ms at p99, and every position of the bystander tracker
 * (one per second) answered 200.
 */
export function assertBystandersUnharmed(report: AttackReport<unknown>): void {
  const bystanders = systemTimes(report.bystanders);
  const figures = describeTimes(bystanders, report.bystanders.stalls);
  const check = (what: string, list: Sample[], minimum: number) => {
    assert.ok(list.length >= minimum, `${what}: only ${list.length} answers while the attack ran (${figures})`);
    const failures = list.filter((s) => s.status !== 200);
    assert.equal(failures.length, 0, `${what}: answers other than 200: ${JSON.stringify(failures)} (${figures})`);
    assert.ok(percentile(list, 99) <= P99_LIMIT_MS, `${what}: p99 over ${P99_LIMIT_MS} ms (${figures})`);
  };
  for (const [service, list] of Object.entries(bystanders.livez)) check(`livez of ${service}`, list, 1);
  check("the bystander shop's GET", bystanders.client, 1);
  const refused = bystanders.tracker.filter((s) => s.status !== 200);
  assert.equal(refused.length, 0, `the bystander tracker was refused: ${JSON.stringify(refused)} (${figures})`);
  assert.ok(
    bystanders.tracker.length >= Math.floor(report.ms / 1000),
    `the bystander tracker sent ${bystanders.tracker.length} positions in ${Math.round(report.ms)} ms (${figures})`,
  );
}
