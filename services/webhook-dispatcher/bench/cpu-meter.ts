/**
 * CPU time spent by each party during a stretch of the benchmark, from Linux /proc (10 ms
 * ticks) and process.cpuUsage(): this process (the dispatcher), the receiver's and the
 * publisher's processes, the PostgreSQL backends of the dispatcher's database and the NATS
 * server. On a shared 2-core machine webhooks/s move with the neighbours' load; CPU per webhook
 * does much less, so it says whether a change paid.
 */
import { createBackendsMeter, formatCpuPerUnit, natsServerPid, processCpuMs } from "@dos/service-kit/testing";
import { CompiledQuery, type Kysely } from "kysely";

export interface CpuSample {
  process: number;
  receiver: number;
  publisher: number;
  postgres: number;
  nats: number;
}

export function createCpuMeter<T>(db: Kysely<T>, natsUrl: string, pids: { receiver: number; publisher: number }) {
  const natsPid = natsServerPid(natsUrl);
  // Every backend, the asking one too: it is one of the dispatcher's own pooled connections.
  const backends = createBackendsMeter(
    (text, values) => db.executeQuery<{ pid: number }>(CompiledQuery.raw(text, values)),
    { includeAsking: true },
  );
  return async function sample(): Promise<CpuSample> {
    const postgres = (await backends()).cpuMs;
    const usage = process.cpuUsage();
    return {
      process: (usage.user + usage.system) / 1000,
      receiver: processCpuMs(pids.receiver),
      publisher: processCpuMs(pids.publisher),
      postgres,
      nats: natsPid === null ? 0 : processCpuMs(natsPid),
    };
  };
}

/** CPU ms per webhook (or POST) between two samples, per party and in all. */
export function formatCpu(before: CpuSample, after: CpuSample, units: number): string {
  return `${formatCpuPerUnit(before, after, units)} CPU ms`;
}
