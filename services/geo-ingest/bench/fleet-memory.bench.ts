/**
 * Memory of geo-ingest with 100,000 vehicles in the FLEET bucket: the service runs as its own
 * process, as `npm start` runs it (built first by the bench script), loads the bucket, then receives positions for 10 s spread over every
 * vehicle (so the rate limiter and the latest-position map hold them too). Prints the
 * process's resident memory (VmRSS) after the load and after the traffic, and its peak (VmHWM).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "@dos/service-kit/testing";
import { freePort } from "../test/harness.ts";
import { benchInfra, runLoad, seedFleet } from "./bench-kit.ts";

const VEHICLES = 100_000;
const LIMIT_MB = 300;
const PROVIDER = "bench-trackers";
const serviceDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The service as `npm start` runs it in production: the built JavaScript, with the V8 flags of
 * the package's start script (a smaller young generation; see the README).
 */
function startArguments(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(serviceDir, "package.json"), "utf8")) as { scripts: { start: string } };
  const [node, ...args] = pkg.scripts.start.split(" ");
  if (node !== "node") throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return args;
}

async function heapUsedMb(port: number): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes\{[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? Number.NaN) / 1024 / 1024;
}

/** VmRSS and VmHWM of a process, in MB. */
function memoryOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

const infra = await benchInfra("geo_memory");
try {
  const seeding = performance.now();
  await seedFleet(infra.kv, "MEM-", VEHICLES, PROVIDER);
  process.stderr.write(`seeded ${VEHICLES} vehicles in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`);

  const port = await freePort();
  const child = spawn(process.execPath, startArguments(), {
    cwd: serviceDir,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: infra.database.url,
      NATS_URL: infra.natsUrl,
      NATS_NAMESPACE: infra.namespace,
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const pid = child.pid ?? 0;
  try {
    const started = performance.now();
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok,
      120_000,
      "geo-ingest to load the fleet",
    );
    const loadedIn = (performance.now() - started) / 1000;
    const loaded = memoryOf(pid);
    const traffic = await runLoad({
      port,
      connections: 64,
      warmupMs: 0,
      durationMs: 10_000,
      vehicles: VEHICLES,
      vehiclePrefix: "MEM-",
      provider: PROVIDER,
    });
    const after = memoryOf(pid);
    const heap = await heapUsedMb(port);
    process.stdout.write(
      `fleet: ${VEHICLES} vehicles loaded in ${loadedIn.toFixed(1)} s; rss after load: ${loaded.rssMb.toFixed(0)} MB\n` +
        `after 10 s of positions (${traffic.okTotal} answered 200, ${Math.min(traffic.okTotal, VEHICLES)} vehicles): ` +
        `rss ${after.rssMb.toFixed(0)} MB, peak ${after.peakMb.toFixed(0)} MB, V8 heap used ${heap.toFixed(0)} MB\n` +
        `memory: peak ${after.peakMb.toFixed(0)} MB of ${LIMIT_MB} MB allowed — ${after.peakMb < LIMIT_MB ? "ok" : "OVER"}\n`,
    );
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
} finally {
  await infra.close();
}
