/**
 * Instructions per position, counted by valgrind's callgrind: what a change to the hot path
 * saves, measured the same on a loaded machine as on a quiet one (CPU time and throughput
 * follow the machine's other work; instruction counts do not). Not part of `npm run bench`:
 * the server runs some 50 times slower under valgrind.
 *
 *   node bench/instructions.ts geo|floor [requests (3000)] [rate per second (150)]
 *
 * The server (built geo-ingest as `npm start` runs it, or the floor) starts under callgrind with
 * collection off, loads its fleet (BENCH_VEHICLES, 2,000 in active rounds), takes an unmeasured
 * warm-up at the same rate so that V8 has compiled the hot path, then collects while the
 * open-loop generator sends `requests` positions at `rate` a second from as many trackers. Every
 * thread of the process counts (V8's compiler and garbage collector threads included). The
 * figures are only comparable at the same rate: batches are smaller under valgrind than at
 * full speed, so each position carries more of its batch's cost than it does in production.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { benchInfra, runOpenLoop, seedFleet, startFloor, startService } from "./bench-kit.ts";

const [target = "geo", requestsArg = "3000", rateArg = "150"] = process.argv.slice(2);
if (target !== "geo" && target !== "floor")
  throw new Error("usage: node bench/instructions.ts geo|floor [requests] [rate]");
const REQUESTS = Number(requestsArg);
const RATE = Number(rateArg);
const VEHICLES = Number(process.env.BENCH_VEHICLES ?? 2000);
const WARMUP_MS = 20_000;
const PROVIDER = "bench-trackers";

const outDir = mkdtempSync(path.join(os.tmpdir(), "geo-callgrind-"));
const wrapper = [
  "valgrind",
  "--tool=callgrind",
  "--instr-atstart=no",
  // V8 writes machine code at run time; valgrind must notice code it already translated changing.
  "--smc-check=all-non-file",
  `--callgrind-out-file=${outDir}/callgrind.out.%p`,
  "--log-file=/dev/null",
];
const infra = await benchInfra("geo_ir");
try {
  process.stderr.write(`seeding ${VEHICLES} vehicles; starting ${target} under callgrind (${outDir})...\n`);
  await seedFleet(infra.kv, "BENCH-T", VEHICLES, PROVIDER);
  const env = { LOG_LEVEL: "info" };
  const server = target === "geo" ? await startService(infra, env, wrapper) : await startFloor(infra, env, wrapper);
  const prefix = target === "geo" ? "BENCH-T" : "FLOOR-T";
  const load = (durationMs: number) =>
    runOpenLoop({
      port: server.port,
      trackers: Math.min(RATE, VEHICLES),
      warmupMs: 0,
      durationMs,
      vehiclePrefix: prefix,
      provider: PROVIDER,
      maxConnections: 256,
      drainMs: 60_000,
    });
  try {
    await load(WARMUP_MS);
    // A tracker's next position is due a second after its last: sooner would be a 429.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // valgrind names its control pipe after $USER and $HOST, which the server has as none and
    // 127.0.0.1 (its listening address): callgrind_control must look for the same name.
    const control = (command: string) =>
      execFileSync("callgrind_control", [command, String(server.pid)], {
        stdio: "ignore",
        env: { PATH: process.env.PATH, HOST: "127.0.0.1" },
      });
    control("--instr=on");
    const round = await load((REQUESTS / RATE) * 1000);
    control("--dump");
    const instructions = readdirSync(outDir)
      .filter((name) => name.startsWith("callgrind.out."))
      .map((name) => readFileSync(path.join(outDir, name), "utf8"))
      .reduce((sum, text) => sum + Number(/^summary: (\d+)/m.exec(text)?.[1] ?? 0), 0);
    process.stdout.write(
      `${target}: ${round.answeredTotal} answered (${JSON.stringify(round.statuses)}) at ${RATE}/s, ` +
        `${(instructions / 1e6).toFixed(0)} M instructions, ${(instructions / Math.max(1, round.answeredTotal) / 1000).toFixed(1)} k per position\n`,
    );
  } finally {
    await server.stop();
  }
} finally {
  await infra.close();
}
