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

/** Times the threads of a process went to sleep waiting so far (voluntary context switches); 0 when it has ended. */
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

/** What a set of processes has spent so far. */
export interface SpentSoFar {
  cpuMs: number;
  wakeUps: number;
}

/**
 * A meter of the PostgreSQL backends serving some databases: each call reads what they have
 * spent so far (CPU ms and wake-ups), listed through `query`. Backends come and go (a pool
 * closes idle connections, a benchmark's variant stops), and a sum of the backends alive at each
 * reading would lose a finished backend's time and go down. So each backend keeps its last
 * reading once it has ended, and a pid taken again by a new backend adds to the old one's. What
 * a backend spends after its last reading, or in all when it starts and ends between two
 * readings, is not seen.
 *
 * `databases`: whose backends count (the database `query` runs on when not given). The backend
 * answering the listing is left out unless `includeAsking`: count it only when `query` runs on
 * one of the measured service's own pooled connections.
 */
export function createBackendsMeter(
  query: (text: string, values: unknown[]) => Promise<{ rows: ReadonlyArray<{ pid: number }> }>,
  options: { databases?: string[]; includeAsking?: boolean } = {},
): () => Promise<SpentSoFar> {
  const which = options.databases ? "datname = any($1)" : "datname = current_database()";
  const text = `select pid from pg_stat_activity where ${which}${options.includeAsking ? "" : " and pid <> pg_backend_pid()"}`;
  const values = options.databases ? [options.databases] : [];
  const seen = new Map<number, SpentSoFar>();
  const retired: SpentSoFar = { cpuMs: 0, wakeUps: 0 };
  return async () => {
    for (const { pid } of (await query(text, values)).rows) {
      const now = { cpuMs: processCpuMs(pid), wakeUps: processWakeUps(pid) };
      const known = seen.get(pid);
      // Nothing read: it ended between the listing and the reading, and its last reading stands.
      if (known && now.cpuMs === 0 && now.wakeUps === 0) continue;
      if (known && (now.cpuMs < known.cpuMs || now.wakeUps < known.wakeUps)) {
        retired.cpuMs += known.cpuMs;
        retired.wakeUps += known.wakeUps;
      }
      seen.set(pid, now);
    }
    const total = { ...retired };
    for (const spent of seen.values()) {
      total.cpuMs += spent.cpuMs;
      total.wakeUps += spent.wakeUps;
    }
    return total;
  };
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
