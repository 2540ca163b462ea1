/**
 * CPU time of the processes a benchmark drives, from Linux /proc (10 ms ticks). On a shared
 * 2-core machine requests/s move with the neighbours' load; CPU per request does much less, so
 * it says whether a change paid. Elsewhere than Linux every figure reads 0.
 */
import { readdirSync, readFileSync } from "node:fs";

/** CPU ms (user + system) used so far by a process; 0 when it has ended or /proc is absent. */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    // The process ended between listing and reading.
    return 0;
  }
}

/**
 * CPU ms used so far by the PostgreSQL backends serving the database that `query` runs on. The
 * backend asking is left out unless `includeAsking`: it is counted only when the query runs on
 * one of the measured service's own pooled connections.
 */
export async function databaseBackendsCpuMs(
  query: (text: string) => Promise<{ rows: ReadonlyArray<{ pid: number }> }>,
  includeAsking = false,
): Promise<number> {
  const { rows } = await query(
    `select pid from pg_stat_activity where datname = current_database()${includeAsking ? "" : " and pid <> pg_backend_pid()"}`,
  );
  return rows.reduce((sum, { pid }) => sum + processCpuMs(pid), 0);
}

/** The nats-server listening on the URL's port (other NATS servers may run on the machine). */
export function natsServerPid(natsUrl: string): number | null {
  const port = new URL(natsUrl).port || "4222";
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  for (const entry of entries) {
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

/**
 * CPU ms per unit of work of each party between two samples, and their sum, written
 * "a 0.12 + b 0.30 = 0.42" (parties in the samples' order).
 */
export function formatCpuPerUnit<K extends string>(
  before: Record<K, number>,
  after: Record<K, number>,
  units: number,
): string {
  const parties = (Object.keys(after) as K[]).map(
    (key) => [key, (after[key] - before[key]) / Math.max(1, units)] as const,
  );
  const total = parties.reduce((sum, [, ms]) => sum + ms, 0);
  return `${parties.map(([key, ms]) => `${key} ${ms.toFixed(2)}`).join(" + ")} = ${total.toFixed(2)}`;
}
