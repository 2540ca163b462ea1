/**
 * The benchmarks' open-loop load generator: `trackers` trackers each posting one position a
 * second, so `trackers` requests/s offered, each sent at its scheduled time whether or not the
 * earlier ones have been answered. Tracker i posts at i/trackers of each second, with that time
 * as its timestamp. A closed loop (one request per connection after the previous answer) sends
 * less when the server slows down and so hides the waits it causes (coordinated omission); here a
 * request's latency runs from the time it was scheduled, so a stall of the server, or of this
 * generator, counts in full for every request that should have gone meanwhile.
 *
 * HTTP/1.1 without pipelining, as trackers send: a request goes on an idle keep-alive
 * connection, or on a new one when none is idle (up to `maxConnections`; beyond that it waits
 * for the first to free up, its latency still running). Run as its own process; prints one JSON
 * line of results (a LoadRound, with the open loop's own figures) on stdout.
 */
import net from "node:net";
import type { LoadRound } from "./load-generator.ts";

export interface OpenLoopOptions {
  port: number;
  /** Trackers, each posting once a second: the offered rate in requests per second. */
  trackers: number;
  warmupMs: number;
  durationMs: number;
  /** Tracker i posts for vehicle `${vehiclePrefix}${i}`. */
  vehiclePrefix: string;
  provider: string;
  maxConnections: number;
  /** How long answers are awaited after the last scheduled request. */
  drainMs: number;
}

export interface OpenLoopRound extends LoadRound {
  /** Requests scheduled in the measured window that had no answer when the generator gave up. */
  unanswered: number;
  /** How late the generator itself sent requests against their schedule: p99 and max, ms. */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
  /** Connections opened over the run. */
  connections: number;
  /** Requests sent again because the server closed their keep-alive connection as they went out. */
  resent: number;
}

const BUCKET_MS = 0.05;
const BUCKETS = 200_000; // latencies up to 10 s, in 50 µs steps
const LAG_BUCKETS = 20_000;

async function run(options: OpenLoopOptions): Promise<OpenLoopRound> {
  const cpuStart = process.cpuUsage();
  const histogram = new Uint32Array(BUCKETS);
  const lagHistogram = new Uint32Array(LAG_BUCKETS);
  const statuses: Record<string, number> = {};
  const intervalMs = 1000 / options.trackers;
  const total = Math.floor((options.warmupMs + options.durationMs) / intervalMs);
  const measuredFrom = Math.ceil(options.warmupMs / intervalMs);
  const start = performance.now() + 50;
  const wallStart = Date.now() + 50;
  let next = 0;
  let okTotal = 0;
  let answeredTotal = 0;
  let answeredMeasured = 0;
  let socketErrors = 0;
  let connections = 0;
  let open = 0;
  let lagMax = 0;
  let resent = 0;
  let stopping = false;

  const body = (n: number) => {
    const tracker = n % options.trackers;
    const json = JSON.stringify({
      timestamp: new Date(wallStart + n * intervalMs).toISOString(),
      latitude: 48.8 + (n % 1000) / 10_000,
      longitude: 2.3 + (n % 777) / 10_000,
      provider: options.provider,
      tracker_id: tracker,
    });
    return (
      `POST /external/vehicles/${options.vehiclePrefix}${tracker}/geolocations HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
    );
  };

  interface Connection {
    socket: net.Socket;
    /** The request in flight on it (its number), or -1. */
    current: number;
  }
  const idle: Connection[] = [];
  /** Requests due while every connection was busy and no more could be opened. */
  const waiting: number[] = [];
  let waitingHead = 0;

  const record = (n: number, status: string) => {
    answeredTotal++;
    if (status === "200") okTotal++;
    if (n < measuredFrom) return;
    answeredMeasured++;
    statuses[status] = (statuses[status] ?? 0) + 1;
    const latency = performance.now() - (start + n * intervalMs);
    const bucket = Math.min(BUCKETS - 1, Math.max(0, Math.floor(latency / BUCKET_MS)));
    histogram[bucket] = (histogram[bucket] ?? 0) + 1;
  };

  const send = (connection: Connection, n: number) => {
    connection.current = n;
    const lag = performance.now() - (start + n * intervalMs);
    if (lag > lagMax) lagMax = lag;
    const bucket = Math.min(LAG_BUCKETS - 1, Math.max(0, Math.floor(lag / BUCKET_MS)));
    lagHistogram[bucket] = (lagHistogram[bucket] ?? 0) + 1;
    connection.socket.write(body(n));
  };

  const freed = (connection: Connection) => {
    connection.current = -1;
    if (waitingHead < waiting.length) send(connection, waiting[waitingHead++] as number);
    else idle.push(connection);
  };

  const connect = (first: number) => {
    connections++;
    open++;
    const socket = net.connect(options.port, "127.0.0.1");
    socket.setNoDelay(true);
    const connection: Connection = { socket, current: first };
    let buffer: Buffer = Buffer.alloc(0);
    socket.on("connect", () => send(connection, first));
    socket.on("data", (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      const headerEnd = buffer.indexOf("\r\n\r\n");
      if (headerEnd < 0) return;
      const head = buffer.subarray(0, headerEnd).toString("latin1");
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < headerEnd + 4 + length) return;
      buffer = buffer.subarray(headerEnd + 4 + length);
      record(connection.current, head.slice(9, 12));
      freed(connection);
    });
    socket.on("error", () => {
      socketErrors++;
    });
    socket.on("close", () => {
      open--;
      const index = idle.indexOf(connection);
      if (index >= 0) idle.splice(index, 1);
      // The server closed a keep-alive connection as the request went out on it (its idle
      // timeout): sent again on another, as HTTP clients do; its latency still runs from its time.
      if (connection.current >= 0 && !stopping) {
        resent++;
        dispatch(connection.current);
      }
    });
  };

  const dispatch = (n: number) => {
    const connection = idle.pop();
    if (connection) send(connection, n);
    else if (open < options.maxConnections) connect(n);
    else waiting.push(n);
  };

  // Every millisecond, everything whose time has come goes (timers are late on a loaded
  // machine; the latency of a late request still counts from its schedule).
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && start + next * intervalMs <= now) dispatch(next++);
      if (next < total) setTimeout(tick, 1);
      else resolve();
    };
    setTimeout(tick, 50);
  });
  const scheduled = total - measuredFrom;
  const deadline = performance.now() + options.drainMs;
  while (answeredTotal < total && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // Still unanswered: counted at the histogram's last bucket (the longest latency it holds).
  stopping = true;
  const unanswered = Math.max(0, scheduled - answeredMeasured);
  histogram[BUCKETS - 1] = (histogram[BUCKETS - 1] ?? 0) + unanswered;
  for (const connection of idle.splice(0)) connection.socket.end();
  waiting.length = 0;

  const latencies: Array<[number, number]> = [];
  histogram.forEach((count, bucket) => {
    if (count > 0) latencies.push([bucket, count]);
  });
  let seen = 0;
  let lagP99 = Number.NaN;
  for (let bucket = 0; bucket < LAG_BUCKETS; bucket++) {
    seen += lagHistogram[bucket] ?? 0;
    if (seen >= Math.ceil(total * 0.99)) {
      lagP99 = (bucket + 1) * BUCKET_MS;
      break;
    }
  }
  const cpu = process.cpuUsage(cpuStart);
  return {
    statuses,
    measuredMs: options.durationMs,
    latencies,
    okTotal,
    answeredTotal,
    cpuMs: (cpu.user + cpu.system) / 1000,
    sent: total,
    socketErrors,
    unanswered,
    sendLagP99Ms: lagP99,
    sendLagMaxMs: lagMax,
    connections,
    resent,
  };
}

if (process.argv[2]) {
  const result = await run(JSON.parse(process.argv[2]) as OpenLoopOptions);
  // Then exit: connections still waiting on an answer must not hold the process open (once the
  // line is written: a pipe's write completes later, and an exit before would cut it).
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}
