/**
 * What the fleet soak samples while it runs, from outside the services: each service's resident
 * memory (VmRSS) and CPU share since the last sample (/proc/<pid>), the machine's load average and
 * busy share (/proc/loadavg, /proc/stat: the machine is shared, so what else ran is part of the
 * figures), the work waiting (unpublished outbox events, pending webhook messages, the positions
 * delivery-api has not yet read) and the size on disk of the positions.
 */
import { readFileSync } from "node:fs";
import { natsNames } from "@dos/contracts";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import type { SystemUnderTest } from "../src/system.ts";
import { FLEET_PREFIX } from "./fleet-setup.ts";

/** Linux's clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat times. */
const TICKS_PER_SECOND = 100;

export interface FleetSample {
  atSeconds: number;
  rssMb: Record<string, number>;
  /**
   * Per service, the V8 heap in use (nodejs_heap_size_used_bytes on its /metrics): what RSS holds
   * beyond it is the heap's free room, code, buffers and native memory. -1: /metrics did not answer.
   */
  heapMb: Record<string, number>;
  /**
   * Per service, % of one core since the previous sample; "postgres" is the backends connected
   * to the soak's database (PostgreSQL is shared with other work on this machine).
   */
  cpuPercent: Record<string, number>;
  /** /proc/loadavg's 1-minute figure. */
  load1: number;
  /** The whole machine's busy share since the previous sample, % of all its cores. */
  machineBusyPercent: number;
  outboxUnpublished: number;
  webhookQueue: number;
  /** Latest positions waiting for delivery-api (its consumer's pending + unacknowledged). */
  positionsBacklog: number;
  /**
   * Latest positions delivery-api read per second since the previous sample. geo-ingest publishes
   * one per vehicle per second and the stream keeps only each vehicle's newest, so below the
   * fleet's size this says how often a round's tracker position (and ETA) is refreshed.
   */
  positionsReadPerSecond: number;
  /**
   * How old the tracker position delivery-api holds for each active round is (what the tracking
   * page and the ETA use), in seconds: median and oldest; rounds without one count as never.
   */
  trackerAgeP50S: number;
  trackerAgeMaxS: number;
  roundsWithoutTracker: number;
}

function procTicks(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15)
  } catch {
    return 0;
  }
}

function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const kb = Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0);
    return Math.round(kb / 102.4) / 10;
  } catch {
    return 0;
  }
}

function machineTicks(): { busy: number; total: number } {
  const cpu = (readFileSync("/proc/stat", "utf8").split("\n")[0] as string).trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((sum, v) => sum + v, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

async function heapUsedMb(url: string): Promise<number> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    const line = text.split("\n").find((l) => l.startsWith("nodejs_heap_size_used_bytes"));
    return line ? Math.round(Number(line.slice(line.lastIndexOf(" ") + 1)) / 1024 / 1024) : -1;
  } catch {
    // No answer within 5 s (a starved or stopped process): unknown, shown as "-".
    return -1;
  }
}

export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

export async function startFleetProbes(system: SystemUnderTest, started: number) {
  const db = new pg.Pool({ connectionString: system.env.DATABASE_URL, max: 2 });
  const nc = await connect({ servers: system.nats.url, ...system.nats.harness, name: "fleet-soak-probe" });
  const jsm = await jetstreamManager(nc);
  const names = natsNames(system.env.NATS_NAMESPACE);
  let last = { at: Date.now(), ticks: new Map<string, number>(), machine: machineTicks(), positionsRead: 0 };

  async function count(sql: string): Promise<number> {
    return Number((await db.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
  }

  return {
    db,
    async sample(): Promise<FleetSample> {
      const now = Date.now();
      const machine = machineTicks();
      const rss: Record<string, number> = {};
      const cpu: Record<string, number> = {};
      const ticks = new Map<string, number>();
      const share = (used: number) =>
        last.ticks.size ? Math.round((used / TICKS_PER_SECOND / ((now - last.at) / 1000)) * 100) : 0;
      const heap: Record<string, number> = {};
      for (const service of system.services) {
        const name = service.spec.name;
        rss[name] = rssMb(service.child.pid);
        heap[name] = await heapUsedMb(service.url);
        ticks.set(name, procTicks(service.child.pid));
        // A process gone (or restarted) reads 0 ticks: no negative share.
        cpu[name] = share(Math.max(0, (ticks.get(name) ?? 0) - (last.ticks.get(name) ?? 0)));
      }
      // Backends come and go with the pools: each is counted from the previous sample, or whole.
      const backends = await db.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
      );
      let postgresUsed = 0;
      for (const { pid } of backends.rows) {
        const key = `pg:${pid}`;
        ticks.set(key, procTicks(pid));
        // A pid reused by a newer backend reads fewer ticks than its predecessor: counted from 0.
        const before = last.ticks.get(key) ?? 0;
        const now = ticks.get(key) ?? 0;
        postgresUsed += now >= before ? now - before : now;
      }
      cpu.postgres = share(postgresUsed);
      const machineBusy = (100 * (machine.busy - last.machine.busy)) / Math.max(1, machine.total - last.machine.total);
      const positions = await jsm.consumers
        .info(names.streams.vehiclePositions, names.consumers.deliveryApiPositions)
        .catch(() => null);
      const positionsRead = positions?.delivered.consumer_seq ?? 0;
      const readPerSecond = last.ticks.size ? (positionsRead - last.positionsRead) / ((now - last.at) / 1000) : 0;
      last = { at: now, ticks, machine, positionsRead };
      const age = await db.query<{ p50: number | null; max: number | null; without: number }>(
        `select percentile_cont(0.5) within group (order by extract(epoch from now() - p.recorded_at))::float8 as p50,
                max(extract(epoch from now() - p.recorded_at))::float8 as max,
                count(*) filter (where p.round_id is null)::int as without
           from delivery.rounds r
           join delivery.vehicles v on v.id = r.vehicle_id
           left join delivery.round_positions p on p.round_id = r.id and p.source = 'tracker'
          where r.status = 'active' and v.external_id like $1`,
        [`${FLEET_PREFIX}%`],
      );
      return {
        atSeconds: Math.round((now - started) / 1000),
        rssMb: rss,
        heapMb: heap,
        cpuPercent: cpu,
        load1: Number(loadAverage().split(" ")[0]),
        machineBusyPercent: Math.round(machineBusy),
        outboxUnpublished: await count("select count(*) as n from delivery.outbox where published_at is null"),
        webhookQueue: await count("select count(*) as n from webhooks.messages where state = 'pending'"),
        positionsBacklog: positions ? positions.num_pending + positions.num_ack_pending : -1,
        positionsReadPerSecond: Math.round(readPerSecond),
        trackerAgeP50S: Math.round(age.rows[0]?.p50 ?? 0),
        trackerAgeMaxS: Math.round(age.rows[0]?.max ?? 0),
        roundsWithoutTracker: age.rows[0]?.without ?? 0,
      };
    },
    async close() {
      await nc.close();
      await db.end();
    },
  };
}
export type FleetProbes = Awaited<ReturnType<typeof startFleetProbes>>;
