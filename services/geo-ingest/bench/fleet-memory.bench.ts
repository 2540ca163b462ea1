/**
 * Memory of geo-ingest with 100,000 vehicles in the FLEET bucket: the service runs as its own
 * process, as `npm start` runs it (built first by the bench script; see startService), loads
 * the bucket, then receives positions for 10 s spread over every vehicle (so the rate limiter
 * and each vehicle's latest position hold them too). Prints the process's resident memory
 * (VmRSS) after the load and after the traffic, and its peak (VmHWM).
 */
import { readFileSync } from "node:fs";
import { benchInfra, runLoad, seedFleet, startService } from "./bench-kit.ts";

const VEHICLES = 100_000;
const LIMIT_MB = 300;
const PROVIDER = "bench-trackers";

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

  const started = performance.now();
  const service = await startService(infra, { LOG_LEVEL: "warn" });
  const { pid, port } = service;
  try {
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
    await service.stop();
  }
} finally {
  await infra.close();
}
