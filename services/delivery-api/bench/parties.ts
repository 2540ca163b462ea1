/**
 * The other processes of the system the create benchmark runs, each in its own process as in
 * production so that its CPU time is its own: the pricing service (its own migrated database,
 * the account's tariff created through the operator API) and webhook-dispatcher (its own
 * database, consuming DELIVERY_EVENTS).
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createTestDatabase } from "@dos/service-kit/testing";

const run = promisify(execFile);
// The pricing service's own entry points: its migrations, and its benchmark's server process.
const pricingMigrate = fileURLToPath(new URL("../../pricing/src/migrate.ts", import.meta.url));
const pricingServer = fileURLToPath(new URL("../../pricing/bench/responders.ts", import.meta.url));
const dispatcherProcess = fileURLToPath(new URL("./dispatcher-process.ts", import.meta.url));

export interface Party {
  pid: number;
  /** The database its backends serve. */
  database: string;
  stop(): Promise<void>;
}

/** Spawns `args`, waits for its first output line (`ready ...`), and returns the child with that line. */
async function spawnReady(args: string[], what: string) {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const [chunk] = await once(child.stdout, "data");
  const line = String(chunk).trim();
  if (!line.startsWith("ready")) throw new Error(`${what} did not start: ${line}`);
  return {
    child,
    line,
    async stop() {
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/** The real pricing service in its own process, on its own migrated database. */
export async function startPricing(namespace: string): Promise<Party> {
  const database = await createTestDatabase("delivery_bench_pricing");
  await run(process.execPath, [pricingMigrate], {
    env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: "warn" },
    timeout: 30_000,
  });
  const started = await spawnReady([pricingServer, "pricing", namespace, database.url], "pricing");
  return {
    pid: started.child.pid ?? 0,
    database: database.name,
    async stop() {
      await started.stop();
      await database.drop();
    },
  };
}

/** The real webhook-dispatcher in its own process (it drops its database as it stops). */
export async function startDispatcher(namespace: string): Promise<Party> {
  const started = await spawnReady([dispatcherProcess, namespace], "webhook-dispatcher");
  return { pid: started.child.pid ?? 0, database: started.line.split(" ")[1] ?? "", stop: started.stop };
}
