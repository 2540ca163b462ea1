/**
 * The benchmarks' HTTP load generator, run as its own process so it does not share the server's
 * event loop (on a 2-core machine it still competes for CPU; the README says so). It keeps
 * `connections` keep-alive sockets busy, one request at a time each, for `warmupMs` and then
 * `durationMs`, every request for the next vehicle in turn, from that vehicle's tracker, with the
 * time of the call as its timestamp, and prints one JSON line of results on stdout.
 *
 * Raw sockets rather than an HTTP client library: the client must cost less CPU than the
 * server it measures, and the answers (Fastify's, with Content-Length) are simple to frame.
 */
import net from "node:net";

export interface LoadOptions {
  port: number;
  connections: number;
  warmupMs: number;
  durationMs: number;
  vehicles: number;
  vehiclePrefix: string;
  provider: string;
  /** First request number: rounds against one server continue the sequence, so vehicles keep their turn. */
  sequenceStart?: number;
}

/** One run of the generator. */
export interface LoadRound {
  /** Answers during the measured window, by status, and the window's length. */
  statuses: Record<string, number>;
  measuredMs: number;
  /** Latency histogram of the measured window: [bucket, count] pairs, BUCKET_MS wide. */
  latencies: Array<[number, number]>;
  /** Every 200 answered, warm-up included: each of these positions must be in the table. */
  okTotal: number;
  /** Every answer, warm-up included, and the generator's own CPU time over the whole run. */
  answeredTotal: number;
  cpuMs: number;
  /** Requests sent: the next round's sequenceStart. */
  sent: number;
  socketErrors: number;
}

/** Several rounds of one variant, summed. */
export interface LoadResult {
  statuses: Record<string, number>;
  okPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  okTotal: number;
  answeredTotal: number;
  cpuMs: number;
  socketErrors: number;
}

const BUCKET_MS = 0.05;
const BUCKETS = 40_000; // latencies up to 2 s, in 50 µs steps

/** Sums rounds: throughput over all measured windows, percentiles over all latencies. */
export function mergeRounds(rounds: LoadRound[]): LoadResult {
  const statuses: Record<string, number> = {};
  const histogram = new Map<number, number>();
  let measuredMs = 0;
  for (const round of rounds) {
    measuredMs += round.measuredMs;
    for (const [status, count] of Object.entries(round.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
    for (const [bucket, count] of round.latencies) histogram.set(bucket, (histogram.get(bucket) ?? 0) + count);
  }
  const measured = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  const buckets = [...histogram].sort((a, b) => a[0] - b[0]);
  const percentile = (p: number) => {
    const target = Math.ceil(measured * p);
    let seen = 0;
    for (const [bucket, count] of buckets) {
      seen += count;
      if (seen >= target) return (bucket + 1) * BUCKET_MS;
    }
    return Number.NaN;
  };
  const ok = Object.entries(statuses)
    .filter(([status]) => status.startsWith("2"))
    .reduce((sum, [, count]) => sum + count, 0);
  const total = (pick: (round: LoadRound) => number) => rounds.reduce((sum, round) => sum + pick(round), 0);
  return {
    statuses,
    okPerSecond: ok / (measuredMs / 1000),
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
    okTotal: total((r) => r.okTotal),
    answeredTotal: total((r) => r.answeredTotal),
    cpuMs: total((r) => r.cpuMs),
    socketErrors: total((r) => r.socketErrors),
  };
}

async function run(options: LoadOptions): Promise<LoadRound> {
  const cpuStart = process.cpuUsage();
  const histogram = new Uint32Array(BUCKETS);
  const statuses: Record<string, number> = {};
  let sequence = options.sequenceStart ?? 0;
  let okTotal = 0;
  let answeredTotal = 0;
  let socketErrors = 0;
  let measuring = false;
  let stopping = false;

  const request = () => {
    const n = sequence++;
    const vehicleNumber = n % options.vehicles;
    const vehicle = `${options.vehiclePrefix}${vehicleNumber}`;
    const body = JSON.stringify({
      timestamp: new Date().toISOString(),
      latitude: 48.8 + (n % 1000) / 10_000,
      longitude: 2.3 + (n % 777) / 10_000,
      provider: options.provider,
      tracker_id: vehicleNumber,
    });
    return (
      `POST /external/vehicles/${vehicle}/geolocations HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    );
  };

  const connection = () =>
    new Promise<void>((resolve) => {
      const socket = net.connect(options.port, "127.0.0.1");
      socket.setNoDelay(true);
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        if (stopping) {
          socket.end();
          return;
        }
        sentAt = performance.now();
        socket.write(request());
      };
      socket.on("connect", send);
      socket.on("data", (chunk: Buffer) => {
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
        for (;;) {
          const headerEnd = buffer.indexOf("\r\n\r\n");
          if (headerEnd < 0) return;
          const head = buffer.subarray(0, headerEnd).toString("latin1");
          const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length < headerEnd + 4 + length) return;
          buffer = buffer.subarray(headerEnd + 4 + length);
          const status = head.slice(9, 12);
          answeredTotal++;
          if (status === "200") okTotal++;
          if (measuring) {
            statuses[status] = (statuses[status] ?? 0) + 1;
            const bucket = Math.min(BUCKETS - 1, Math.floor((performance.now() - sentAt) / BUCKET_MS));
            histogram[bucket] = (histogram[bucket] ?? 0) + 1;
          }
          send();
        }
      });
      socket.on("error", () => {
        socketErrors++;
      });
      socket.on("close", () => resolve());
    });

  const done = Promise.all(Array.from({ length: options.connections }, connection));
  await new Promise((resolve) => setTimeout(resolve, options.warmupMs));
  measuring = true;
  const measuredStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, options.durationMs));
  measuring = false;
  const measuredMs = performance.now() - measuredStart;
  stopping = true;
  await done;

  const latencies: Array<[number, number]> = [];
  histogram.forEach((count, bucket) => {
    if (count > 0) latencies.push([bucket, count]);
  });
  const cpu = process.cpuUsage(cpuStart);
  return {
    statuses,
    measuredMs,
    latencies,
    okTotal,
    answeredTotal,
    cpuMs: (cpu.user + cpu.system) / 1000,
    sent: sequence,
    socketErrors,
  };
}

if (process.argv[2]) {
  const result = await run(JSON.parse(process.argv[2]) as LoadOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
