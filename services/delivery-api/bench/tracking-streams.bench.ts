/**
 * Issue 17's tracking-stream attack as a measurement: PostgreSQL transactions per second and an
 * authenticated GET's latency while N `/track/{token}/events` streams are open on D deliveries,
 * against the same figures with no stream open. The streams and the GETs come from a child
 * process (this file with `client`), over loopback, from 127.0.1.1 onwards (20 streams per
 * address, so the per-address cap is not what is measured); the service's caps are lifted unless
 * BENCH_DEFAULT_CAPS=1. Env: BENCH_STREAMS (2000), BENCH_DELIVERIES (1), BENCH_SECONDS (10).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout } from "node:timers/promises";
import { fileURLToPath } from "node:url";

interface ClientJob {
  baseUrl: string;
  paths: string[];
  streams: number;
  seconds: number;
  get: { url: string; headers: Record<string, string> };
}

async function client(job: ClientJob) {
  const statuses: Record<number, number> = {};
  const opened: http.ClientRequest[] = [];
  for (let i = 0; i < job.streams; i++) {
    const from = `127.0.${1 + Math.floor(i / 5000)}.${1 + (Math.floor(i / 20) % 250)}`;
    const path = job.paths[i % job.paths.length] as string;
    await new Promise<void>((resolve) => {
      const request = http.get(`${job.baseUrl}${path}/events`, { localAddress: from, agent: false }, (response) => {
        statuses[response.statusCode ?? 0] = (statuses[response.statusCode ?? 0] ?? 0) + 1;
        response.resume();
        resolve();
      });
      request.on("error", () => resolve());
      opened.push(request);
    });
  }
  await setTimeout(2000);
  console.log("ready");
  const latencies: number[] = [];
  const until = Date.now() + job.seconds * 1000;
  while (Date.now() < until) {
    const started = performance.now();
    const response = await fetch(job.get.url, { headers: job.get.headers });
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    await setTimeout(100);
  }
  for (const request of opened) request.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? 0;
  console.log(JSON.stringify({ statuses, n: latencies.length, p50: at(0.5), p99: at(0.99), max: at(1) }));
}

async function main() {
  const { startDeliveriesTestbed } = await import("../test/delivery-fixtures.ts");
  const { createDelivery, dispatch, opsClient } = await import("../test/dispatch-fixtures.ts");
  const streams = Number(process.env.BENCH_STREAMS ?? 2000);
  const deliveries = Number(process.env.BENCH_DELIVERIES ?? 1);
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const caps: Record<string, string> =
    process.env.BENCH_DEFAULT_CAPS === "1"
      ? {}
      : { API_TRACKING_STREAMS_PER_TOKEN: "100000", API_TRACKING_STREAMS_PER_ADDRESS: "100000" };
  const bed = await startDeliveriesTestbed(caps);
  await bed.api.app.listen({ port: 0, host: "0.0.0.0" });
  const baseUrl = `http://127.0.0.1:${(bed.api.app.server.address() as AddressInfo).port}`;
  const ops = opsClient(bed.api);
  const paths: string[] = [];
  let firstId = 0;
  for (let i = 0; i < deliveries; i++) {
    const created = await createDelivery(bed.api, bed.account);
    firstId ||= created.id;
    const d = await dispatch(ops, created.id, `VAN-BENCH-${i}`);
    await ops.post(`/rounds/${d.roundId}/start`);
    const started = await ops.post(`/tasks/${d.pickupTask}/start`);
    paths.push(new URL(started.body.pickup.tracking_url).pathname);
  }
  const get = { url: `${baseUrl}/api/v2/deliveries/${firstId}`, headers: bed.account.headers };
  const db = new URL(bed.api.config.DATABASE_URL).pathname.slice(1);
  const transactions = async () => {
    await bed.api.pool.query("select pg_stat_clear_snapshot()");
    const { rows } = await bed.api.pool.query(
      "select xact_commit + xact_rollback as n from pg_stat_database where datname = $1",
      [db],
    );
    return Number(rows[0].n);
  };
  for (const n of [0, streams]) {
    const job: ClientJob = { baseUrl, paths, streams: n, seconds, get };
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "client", JSON.stringify(job)]);
    let output = "";
    let before = 0;
    let startedAt = 0;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
      // The window: from when the client's streams are open to its last GET.
      if (startedAt === 0 && output.includes("ready\n")) {
        startedAt = Date.now();
        void transactions().then((count) => {
          before = count;
        });
      }
    });
    await once(child, "close");
    const result = JSON.parse(output.trim().split("\n").pop() ?? "{}");
    // Backends report their counts at most once a second.
    await setTimeout(1100);
    const tps = ((await transactions()) - before) / ((Date.now() - startedAt) / 1000);
    console.log(
      `${n} streams on ${deliveries} deliveries: ${tps.toFixed(0)} tx/s; GET p50 ${result.p50.toFixed(1)} ms, ` +
        `p99 ${result.p99.toFixed(1)} ms, max ${result.max.toFixed(1)} ms (n=${result.n}); answers ${JSON.stringify(result.statuses)}`,
    );
  }
  await bed.close();
}

if (process.argv[2] === "client") await client(JSON.parse(process.argv[3] as string) as ClientJob);
else await main();
