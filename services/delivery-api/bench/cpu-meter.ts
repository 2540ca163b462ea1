/**
 * CPU time spent by each party of a create during a run, from Linux /proc (10 ms ticks): this
 * process (the API and its outbox relay), the PostgreSQL backends of the API's database, the
 * pricing process and the NATS server. On a shared 2-core machine requests/s move with the
 * neighbours' load; CPU per create does much less, so it says whether a change paid.
 */
import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";

export interface CpuSample {
  api: number;
  postgres: number;
  pricing: number;
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

export function createCpuMeter(pool: pg.Pool, pricingPid: number, natsUrl: string) {
  const natsPid = natsServerPid(new URL(natsUrl).port || "4222");
  return async function sample(): Promise<CpuSample> {
    const { rows } = await pool.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
    );
    const usage = process.cpuUsage();
    return {
      api: (usage.user + usage.system) / 1000,
      postgres: rows.reduce((sum, { pid }) => sum + processCpuMs(pid), 0),
      pricing: processCpuMs(pricingPid),
      nats: natsPid === null ? 0 : processCpuMs(natsPid),
    };
  };
}

/** CPU ms per request between two samples, per party. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): string {
  const per = (key: keyof CpuSample) => ((after[key] - before[key]) / Math.max(1, requests)).toFixed(2);
  const total = (Object.keys(before) as Array<keyof CpuSample>).reduce(
    (sum, key) => sum + (after[key] - before[key]) / Math.max(1, requests),
    0,
  );
  return `CPU ms/create: api ${per("api")} + postgres ${per("postgres")} + pricing ${per("pricing")} + nats ${per("nats")} = ${total.toFixed(2)}`;
}
