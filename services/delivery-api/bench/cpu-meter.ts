/**
 * CPU time spent by each party of a create during a run, from Linux /proc: this process (the
 * API with its outbox relay, batchers and background loops), the pricing and webhook-dispatcher
 * processes, the NATS server, and the PostgreSQL backends of the three services' databases. On
 * a shared 2-core machine requests/s move with the neighbours' load; CPU per create does much
 * less, so it says whether a change paid.
 */
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

export function createCpuMeter(pool: pg.Pool, parties: MeteredParties) {
  return async function sample(): Promise<CpuSample> {
    // The backend answering this query is left out: it is the meter's, not the system's.
    const { rows } = await pool.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = any($1) and pid <> pg_backend_pid()",
      [parties.databases],
    );
    const usage = process.cpuUsage();
    return {
      api: (usage.user + usage.system) / 1000,
      pricing: processCpuMs(parties.pricingPid),
      dispatcher: processCpuMs(parties.dispatcherPid),
      nats: parties.natsPid === null ? 0 : processCpuMs(parties.natsPid),
      postgres: rows.reduce((sum, { pid }) => sum + processCpuMs(pid), 0),
    };
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
