/**
 * The benchmark's load generator, run in its own process so that it does not share an event
 * loop with the server it measures. Reads one job as JSON from argv and prints its figures as
 * one JSON line. Two modes:
 * - closed loop (no `ratePerSecond`): autocannon, as fast as `connections` allow;
 * - open loop (`ratePerSecond`): one request every 1/rate s on a fixed schedule, whatever the
 *   answers; latency counts from the scheduled instant, so a slow server cannot hide its
 *   queueing (no coordinated omission). autocannon's own rate limit sends bursts each second.
 */
import http from "node:http";
import autocannon from "autocannon";

export interface LoadJob {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body: string;
  durationSeconds: number;
  connections: number;
  ratePerSecond?: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
}

const job = JSON.parse(process.argv[2] ?? "{}") as LoadJob;
if (!/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(job.url))
  throw new Error("the load generator targets loopback only");

async function closedLoop(): Promise<LoadResult> {
  const result = await autocannon({
    url: job.url,
    method: job.method,
    headers: job.headers,
    body: job.body,
    duration: job.durationSeconds,
    connections: job.connections,
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / job.durationSeconds,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
  };
}

async function openLoop(rate: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const total = Math.round(rate * job.durationSeconds);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const start = performance.now() + 50;
  const send = (scheduled: number) =>
    new Promise<void>((resolve) => {
      const request = http.request(
        job.url,
        { method: job.method, headers: job.headers, agent, timeout: 10_000 },
        (response) => {
          response.resume();
          response.on("end", () => {
            if ((response.statusCode ?? 0) >= 300) non2xx++;
            latencies.push(performance.now() - scheduled);
            resolve();
          });
        },
      );
      request.on("error", () => {
        errors++;
        resolve();
      });
      request.end(job.body);
    });
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const scheduled = start + (i * 1000) / rate;
    const wait = scheduled - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(send(scheduled));
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(1));
  return {
    requests: total,
    requestsPerSecond: total / job.durationSeconds,
    non2xx,
    errors,
    timeouts: 0,
    latencyMs: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) },
  };
}

const output = job.ratePerSecond ? await openLoop(job.ratePerSecond) : await closedLoop();
process.stdout.write(`${JSON.stringify(output)}\n`);
