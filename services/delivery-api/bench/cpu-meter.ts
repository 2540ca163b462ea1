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
import { createBackendsMeter, formatCpuPerUnit, processCpuMs, processWakeUps } from "@dos/service-kit/testing";
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

export function createCpuMeter(pool: pg.Pool, parties: MeteredParties) {
  // Asked through the API's own pool: the backend answering is one of the API's connections and
  // counts with the rest. (Leaving it out, as before, left out a different busy backend at each
  // sample: its work in a run was lost, or its work before the run counted in it.)
  const postgres = createBackendsMeter((text, values) => pool.query<{ pid: number }>(text, values), {
    databases: parties.databases,
    includeAsking: true,
  });
  const measure = (read: (pid: number) => number, postgresFigure: number): CpuSample => ({
    api: read(process.pid),
    pricing: read(parties.pricingPid),
    dispatcher: read(parties.dispatcherPid),
    nats: parties.natsPid === null ? 0 : read(parties.natsPid),
    postgres: postgresFigure,
  });
  return async function sample(): Promise<{ cpu: CpuSample; wakeUps: CpuSample }> {
    const backends = await postgres();
    const usage = process.cpuUsage();
    const cpu = measure(processCpuMs, backends.cpuMs);
    // This process's own figure from getrusage: finer than /proc's 10 ms ticks.
    cpu.api = (usage.user + usage.system) / 1000;
    return { cpu, wakeUps: measure(processWakeUps, backends.wakeUps) };
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
