/** What the geo-ingest benchmarks share: infrastructure, fleet seeding, the load generator process. */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureTopology, fleetKey, natsNames } from "@dos/contracts";
import { connectNats, createLogger, type Database, type NatsHandle } from "@dos/service-kit";
import {
  backendsCpuMs,
  DATABASE_BACKENDS_SQL,
  randomNamespace,
  type TestDatabase,
  testInfra,
} from "@dos/service-kit/testing";
import { type KV, Kvm } from "@nats-io/kv";
import { fleetEntry, migratedDatabase } from "../test/harness.ts";
import type { LoadOptions, LoadRound } from "./load-generator.ts";

const benchDir = path.dirname(fileURLToPath(import.meta.url));

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
      // The benchmark's streams and bucket go with their namespace.
      const jsm = await (await import("@nats-io/jetstream")).jetstreamManager(nats.nc);
      const names = natsNames(namespace);
      for (const stream of [
        names.streams.deliveryEvents,
        names.streams.vehiclePositions,
        `KV_${names.buckets.fleet}`,
      ]) {
        await jsm.streams.delete(stream).catch(() => false);
      }
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

/** Runs the load generator in a child process and returns its results. */
export async function runLoad(options: LoadOptions): Promise<LoadRound> {
  const child = spawn(process.execPath, [path.join(benchDir, "load-generator.ts"), JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  return JSON.parse(output.trim()) as LoadRound;
}

/** CPU time (ms) used so far by the PostgreSQL backends serving a database (Linux /proc, 100 Hz ticks). */
export async function postgresCpuMs(pool: Database<unknown>["pool"]): Promise<number> {
  const { rows } = await pool.query<{ pid: number }>(DATABASE_BACKENDS_SQL);
  return backendsCpuMs(rows);
}
