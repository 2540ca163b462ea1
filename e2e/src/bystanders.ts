/**
 * The well-behaved users of the abuse suite, in a worker thread of their own: their event loop
 * and connections are not the attacker's, so what they measure is the system's answer time, not
 * the test process's. Started by `underAttack` (abuse.ts); stops and posts its samples when told.
 *
 * - every service's `GET /livez`, one request in flight per service, every 50 ms;
 * - the bystander shop's `GET /api/v2/deliveries/{id}` on its own delivery, every 50 ms;
 * - the bystander tracker's position, once per second, stamped with the time of sending.
 *
 * The thread runs at a raised CPU priority, as a client on another machine would not wait for
 * the system's processes; and it records the moments it could not run at all (a timer every
 * 5 ms firing late): the machine itself stalled (a virtual machine's host busy elsewhere), which
 * delays every answer at once, attacked or not. abuse.ts takes those moments out of the answer
 * times they overlap.
 */
import os from "node:os";
import { parentPort, workerData } from "node:worker_threads";

export interface BystanderPlan {
  livez: Record<string, string>;
  client: { url: string; headers: Record<string, string> };
  tracker: { url: string; provider: string };
}

export interface Sample {
  /** When it started on this thread's clock (performance.now()), as stalls are recorded. */
  start: number;
  ms: number;
  /** 0 when no HTTP answer came within the timeout. */
  status: number;
}

/** A stretch this thread could not run, on its clock (performance.now()): from `end - ms` to `end`. */
export interface Stall {
  end: number;
  ms: number;
}

export interface BystanderSamples {
  livez: Record<string, Sample[]>;
  client: Sample[];
  tracker: Sample[];
  stalls: Stall[];
}

/** How often the stall probe's timer is due, and how late it must fire to count as a stall. */
const PROBE_MS = 5;
const STALL_MS = 5;

const TIMEOUT_MS = 5000;

async function timed(url: string, init: RequestInit): Promise<Sample> {
  const start = performance.now();
  let status = 0;
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    await response.arrayBuffer();
    status = response.status;
  } catch {}
  return { start, ms: performance.now() - start, status };
}

/** Records every time a PROBE_MS timer fires more than STALL_MS late, until stopped. */
function probeStalls(stalls: Stall[], stopped: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    let due = performance.now() + PROBE_MS;
    const tick = () => {
      const now = performance.now();
      if (now - due > STALL_MS) stalls.push({ end: now, ms: now - due });
      if (stopped()) return resolve();
      due = now + PROBE_MS;
      setTimeout(tick, PROBE_MS);
    };
    setTimeout(tick, PROBE_MS);
  });
}

/** Calls `once` every `everyMs` (measured from each start), never two at a time, until stopped. */
function repeat(everyMs: number, once: () => Promise<void>, stopped: () => boolean): Promise<void> {
  return (async () => {
    let next = performance.now();
    while (!stopped()) {
      await once();
      next += everyMs;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      else next = performance.now();
    }
  })();
}

if (parentPort) {
  const plan = workerData as BystanderPlan;
  const samples: BystanderSamples = { livez: {}, client: [], tracker: [], stalls: [] };
  try {
    // This thread only (Linux applies a priority per thread); allowed as root, as the tests run.
    os.setPriority(-10);
  } catch {
    // Not allowed: the bystanders keep the services' priority.
  }
  let stop = false;
  const stopped = () => stop;
  // A fresh worker's first calls are slow for reasons of its own (new connections, code not yet
  // compiled): they are made before anything is timed. Not the tracker's, whose budget is 1/s.
  for (let round = 0; round < 3; round++) {
    await Promise.all([
      ...Object.values(plan.livez).map((url) => timed(url, {})),
      timed(plan.client.url, { headers: plan.client.headers }),
    ]);
  }
  const loops = [
    probeStalls(samples.stalls, stopped),
    ...Object.entries(plan.livez).map(([service, url]) => {
      const list: Sample[] = [];
      samples.livez[service] = list;
      return repeat(50, async () => void list.push(await timed(url, {})), stopped);
    }),
    // 20 a second: as often as the shop's rate limit refills (its burst is never spent), and
    // samples enough that the p99 of a few seconds is not simply the slowest answer.
    repeat(
      50,
      async () => void samples.client.push(await timed(plan.client.url, { headers: plan.client.headers })),
      stopped,
    ),
    repeat(
      1000,
      async () => {
        const body = JSON.stringify({
          latitude: 48.85 + Math.random() / 100,
          longitude: 2.35,
          provider: plan.tracker.provider,
          timestamp: new Date().toISOString(),
        });
        const init = { method: "POST", headers: { "content-type": "application/json" }, body };
        samples.tracker.push(await timed(plan.tracker.url, init));
      },
      stopped,
    ),
  ];
  parentPort.once("message", async () => {
    stop = true;
    await Promise.all(loops);
    parentPort?.postMessage(samples);
  });
  parentPort.postMessage("started");
}
