/**
 * CPU time spent by each party of a create during a run, from Linux /proc (10 ms ticks): this
 * process (the API and its outbox relay), the PostgreSQL backends of the API's database, the
 * pricing process and the NATS server. On a shared 2-core machine requests/s move with the
 * neighbours' load; CPU per create does much less, so it says whether a change paid.
 */
import { databaseBackendsCpuMs, formatCpuPerUnit, natsServerPid, processCpuMs } from "@dos/service-kit/testing";
import type pg from "pg";

export interface CpuSample {
  api: number;
  postgres: number;
  pricing: number;
  nats: number;
}

export function createCpuMeter(pool: pg.Pool, pricingPid: number, natsUrl: string) {
  const natsPid = natsServerPid(natsUrl);
  return async function sample(): Promise<CpuSample> {
    const postgres = await databaseBackendsCpuMs((text) => pool.query<{ pid: number }>(text));
    const usage = process.cpuUsage();
    return {
      api: (usage.user + usage.system) / 1000,
      postgres,
      pricing: processCpuMs(pricingPid),
      nats: natsPid === null ? 0 : processCpuMs(natsPid),
    };
  };
}

/** CPU ms per request between two samples, per party. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): string {
  return `CPU ms/create: ${formatCpuPerUnit(before, after, requests)}`;
}
