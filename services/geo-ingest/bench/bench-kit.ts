/** What the geo-ingest benchmarks share: infrastructure, fleet seeding, the load generator process. */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureTopology, fleetKey, natsNames } from "@dos/contracts";
import { connectNats, createLogger, type Database, type NatsHandle } from "@dos/service-kit";
import {
  createBackendsMeter,
  deleteNamespace,
  randomNamespace,
  type TestDatabase,
  testInfra,
  waitFor,
} from "@dos/service-kit/testing";
import { type KV, Kvm } from "@nats-io/kv";
import { fleetEntry, freePort, migratedDatabase } from "../test/harness.ts";
import type { LoadOptions, LoadRound } from "./load-generator.ts";
import type { OpenLoopOptions, OpenLoopRound } from "./open-loop.ts";

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const serviceDir = path.resolve(benchDir, "..");

export interface BenchInfra {
  database: TestDatabase;
  namespace: string;
  natsUrl: string;
  nats: NatsHandle;
  kv: KV;
  close(): Promise<void>;
}

/** A migrated database, a NATS namespace with its topology, and the FLEET bucket. */
export async function benchInfra(label: string): Promise<BenchInfra> {
  const database = await migratedDatabase(label);
  const namespace = randomNamespace();
  const { natsUrl } = testInfra();
  const nats = await connectNats(natsUrl, "geo-ingest-bench", createLogger("bench", "silent"));
  await ensureTopology(nats.nc, { namespace });
  const kv = await new Kvm(nats.nc).open(natsNames(namespace).buckets.fleet);
  return {
    database,
    namespace,
    natsUrl,
    nats,
    kv,
    async close() {
      // The benchmark's streams and buckets go with their namespace.
      await deleteNamespace(nats.nc, namespace);
      await nats.drain();
      await database.drop();
    },
  };
}

/** Writes `count` vehicles in an active round into the FLEET bucket, 1,000 writes in flight. */
export async function seedFleet(kv: KV, prefix: string, count: number, provider: string): Promise<void> {
  for (let start = 0; start < count; start += 1000) {
    const writes: Array<Promise<number>> = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const entry = fleetEntry({ vehicle_external_id: `${prefix}${i}`, vehicle_id: i + 1, provider });
      writes.push(kv.put(fleetKey(entry.vehicle_external_id), JSON.stringify({ ...entry, active_round_id: i + 1 })));
    }
    await Promise.all(writes);
  }
}

/** Runs the closed-loop load generator in a child process and returns its results. */
export function runLoad(options: LoadOptions): Promise<LoadRound> {
  return runGenerator<LoadRound>("load-generator.ts", options);
}

/** Runs the open-loop load generator (a fixed offered rate) in a child process and returns its results. */
export function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopRound> {
  return runGenerator<OpenLoopRound>("open-loop.ts", options);
}

async function runGenerator<R>(script: string, options: object): Promise<R> {
  const child = spawn(process.execPath, [path.join(benchDir, script), JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`${script} exited with ${code}`);
  return JSON.parse(output.trim()) as R;
}

/**
 * A meter of the CPU time (ms) used so far by the PostgreSQL backends serving the pool's
 * database (Linux /proc, 100 Hz ticks), the pool's own asking backend left out. Every variant
 * writes that database, and a backend that ends (a variant's server stopping, a pool closing an
 * idle connection) keeps what it spent: a plain sum over the live backends went down and gave
 * negative figures.
 */
export function postgresCpuMeter(pool: Database<unknown>["pool"]): () => Promise<number> {
  const backends = createBackendsMeter((text, values) => pool.query<{ pid: number }>(text, values));
  return async () => (await backends()).cpuMs;
}

/**
 * The V8 flags of the package's start script (a smaller young generation, a bounded old one;
 * see the README) and the script it runs: the service as `npm start` runs it in production.
 */
function startScript(): { flags: string[]; script: string } {
  const pkg = JSON.parse(readFileSync(path.join(serviceDir, "package.json"), "utf8")) as { scripts: { start: string } };
  const [node, ...args] = pkg.scripts.start.split(" ");
  const script = args.pop();
  if (node !== "node" || !script?.endsWith(".js")) throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return { flags: args, script };
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  /** SIGTERM (the server commits what it accepted, then exits), and waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts geo-ingest as its own process against the benchmark's infrastructure (the built
 * JavaScript: the bench script builds first) and waits until it is ready (fleet loaded). `env`
 * adds variables (GEO_* tuning, LOG_LEVEL).
 */
export function startService(
  infra: BenchInfra,
  env: Record<string, string>,
  wrapper: string[] = [],
): Promise<ServiceProcess> {
  const { flags, script } = startScript();
  return startServer(infra, [...flags, script], env, "geo-ingest to load the fleet", wrapper);
}

/** Starts the durable floor (floor-server.ts) as its own process, with geo-ingest's V8 flags and GEO_* variables. */
export function startFloor(
  infra: BenchInfra,
  env: Record<string, string>,
  wrapper: string[] = [],
): Promise<ServiceProcess> {
  const { flags } = startScript();
  return startServer(
    infra,
    [...flags, path.join(benchDir, "floor-server.ts")],
    env,
    "the floor server to listen",
    wrapper,
  );
}

async function startServer(
  infra: BenchInfra,
  args: string[],
  env: Record<string, string>,
  what: string,
  /** A command the server runs under (valgrind), which must keep the server's process id. */
  wrapper: string[],
): Promise<ServiceProcess> {
  const port = await freePort();
  // BENCH_CPU_PROF=<dir>: each server writes a V8 CPU profile there when it exits.
  const profile = process.env.BENCH_CPU_PROF
    ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(process.env.BENCH_CPU_PROF)]
    : [];
  const command = [...wrapper, process.execPath, ...profile, ...args];
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: serviceDir,
    env: {
      PATH: process.env.PATH,
      ...env,
      DATABASE_URL: infra.database.url,
      NATS_URL: infra.natsUrl,
      NATS_NAMESPACE: infra.namespace,
      HOST: "127.0.0.1",
      PORT: String(port),
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  try {
    const ready = async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok;
    // Under valgrind everything runs some 50 times slower, the fleet's load included.
    await waitFor(ready, wrapper.length > 0 ? 1_200_000 : 120_000, what);
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, pid: child.pid ?? 0, port, stop };
}
