/**
 * CPU time spent by each party of a create during a run, from Linux /proc: this process (the
 * API with its outbox relay, batchers and background loops), the pricing and webhook-dispatcher
 * processes, the NATS server, and the PostgreSQL backends of the three services' databases. On
 * a shared 2-core machine requests/s move with the neighbours' load; CPU per create does much
 * less, so it says whether a change paid.
 *
 * Beside it, the wake-ups: how many times each party's threads went to sleep waiting (voluntary
 * context switches), which is what a process pays per round trip, timer or poll whatever the
 * work. On a loaded machine each one costs far more than its work (caches refilled after the
 * neighbours ran), and counting them is exact where CPU time is noisy.
 */
import { readdirSync, readFileSync } from "node:fs";
import { formatCpuPerUnit, processCpuMs } from "@dos/service-kit/testing";
import type pg from "pg";

export interface CpuSample {
  api: number;
  pricing: number;
  dispatcher: number;
  nats: number;
  postgres: number;
}

export interface MeteredParties {
  pricingPid: number;
  dispatcherPid: number;
  /** Null when NATS is not a process of this machine (its share then reads 0). */
  natsPid: number | null;
  /** The databases whose backends count as the system's PostgreSQL. */
  databases: string[];
}

/** Times the threads of a process went to sleep waiting so far; 0 when it has ended. */
export function processWakeUps(pid: number): number {
  let total = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, "utf8");
      total += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    }
  } catch {
    // The process (or a thread) ended meanwhile.
  }
  return total;
}

export function createCpuMeter(pool: pg.Pool, parties: MeteredParties) {
  // A backend that ends between two samples (the pool closes idle connections after 30 s) takes
  // its CPU time with it: its last reading stays counted, so that what it spent is never
  // subtracted from the figures.
  const backendsSeen = new Map<number, { cpu: number; wakeUps: number }>();
  // A pid used again by a new backend: what the old one spent is kept here.
  const retired = { cpu: 0, wakeUps: 0 };
  const pids = async () => {
    // The backend answering is one of the API's own pooled connections, so it is counted with
    // the rest. (Leaving it out, as before, left out a different busy backend at each sample: its
    // work in a run was lost, or its work before the run counted in it; a tenth of PostgreSQL's
    // figure either way.) The meter's own query costs a fraction of a millisecond per sample.
    const { rows } = await pool.query<{ pid: number }>("select pid from pg_stat_activity where datname = any($1)", [
      parties.databases,
    ]);
    return rows.map((row) => row.pid);
  };
  const measure = (read: (pid: number) => number, postgres: number): CpuSample => ({
    api: read(process.pid),
    pricing: read(parties.pricingPid),
    dispatcher: read(parties.dispatcherPid),
    nats: parties.natsPid === null ? 0 : read(parties.natsPid),
    postgres,
  });
  return async function sample(): Promise<{ cpu: CpuSample; wakeUps: CpuSample }> {
    for (const pid of await pids()) {
      const cpu = processCpuMs(pid);
      const wakeUps = processWakeUps(pid);
      const known = backendsSeen.get(pid);
      // Nothing read: it ended between the listing and the reading, and its last reading stands.
      if (known && cpu === 0 && wakeUps === 0) continue;
      if (known && (cpu < known.cpu || wakeUps < known.wakeUps)) {
        retired.cpu += known.cpu;
        retired.wakeUps += known.wakeUps;
      }
      backendsSeen.set(pid, { cpu, wakeUps });
    }
    let postgresCpu = retired.cpu;
    let postgresWakeUps = retired.wakeUps;
    for (const seen of backendsSeen.values()) {
      postgresCpu += seen.cpu;
      postgresWakeUps += seen.wakeUps;
    }
    const usage = process.cpuUsage();
    const cpu = measure(processCpuMs, postgresCpu);
    // This process's own figure from getrusage: finer than /proc's 10 ms ticks.
    cpu.api = (usage.user + usage.system) / 1000;
    return { cpu, wakeUps: measure(processWakeUps, postgresWakeUps) };
  };
}

/** The whole system's CPU ms per unit between two samples. */
export function totalPerUnit(before: CpuSample, after: CpuSample, units: number): number {
  let total = 0;
  for (const key of Object.keys(after) as Array<keyof CpuSample>) total += after[key] - before[key];
  return total / Math.max(1, units);
}

/** CPU ms per request between two samples, per party: `api 0.30 + ... = 0.70`. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): string {
  return formatCpuPerUnit(before, after, requests);
}
