/**
 * CPU time spent by each party during a stretch of the benchmark, from Linux /proc (10 ms
 * ticks) and process.cpuUsage(): this process (the dispatcher, the receiver and the publisher),
 * the PostgreSQL backends of the dispatcher's database and the NATS server. On a shared 2-core
 * machine webhooks/s move with the neighbours' load; CPU per webhook does much less, so it says
 * whether a change paid.
 */
import { readdirSync, readFileSync } from "node:fs";
import { type Kysely, sql } from "kysely";

export interface CpuSample {
  process: number;
  postgres: number;
  nats: number;
}

function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    // The process ended between listing and reading.
    return 0;
  }
}

/** The nats-server listening on `port` (other NATS servers may run on the machine). */
function natsServerPid(port: string): number | null {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!args[0]?.endsWith("nats-server")) continue;
      const flag = args.findIndex((arg) => arg === "-p" || arg === "--port");
      if ((flag === -1 ? "4222" : args[flag + 1]) === port) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return null;
}

export function createCpuMeter<T>(db: Kysely<T>, natsUrl: string) {
  const natsPid = natsServerPid(new URL(natsUrl).port || "4222");
  return async function sample(): Promise<CpuSample> {
    const { rows } = await sql<{ pid: number }>`
      select pid from pg_stat_activity where datname = current_database()
    `.execute(db);
    const usage = process.cpuUsage();
    return {
      process: (usage.user + usage.system) / 1000,
      postgres: rows.reduce((sum, { pid }) => sum + processCpuMs(pid), 0),
      nats: natsPid === null ? 0 : processCpuMs(natsPid),
    };
  };
}

/** CPU ms per unit of work between two samples, per party and in all. */
export function cpuPer(before: CpuSample, after: CpuSample, count: number): CpuSample & { total: number } {
  const per = (key: keyof CpuSample) => (after[key] - before[key]) / Math.max(1, count);
  const result = { process: per("process"), postgres: per("postgres"), nats: per("nats") };
  return { ...result, total: result.process + result.postgres + result.nats };
}

export function formatCpu(cpu: CpuSample & { total: number }): string {
  return (
    `process ${cpu.process.toFixed(2)} + postgres ${cpu.postgres.toFixed(2)} + nats ${cpu.nats.toFixed(2)} = ` +
    `${cpu.total.toFixed(2)} CPU ms`
  );
}
