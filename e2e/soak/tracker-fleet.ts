/**
 * A fleet of GPS trackers as geo-ingest meets it, run as its own process (`startTrackerFleet`
 * forks this file) so that its event loop is not the one that drives the client API or receives
 * the webhooks. Each tracker posts its vehicle's position once a second by its own clock, the
 * fleet's clocks spread evenly over the second (tracker i at i/N s), with its provider and its
 * X-Provider-Token. The load is open: a position is sent when it is due whether or not earlier
 * ones were answered, and its latency runs from when it was due, so a stalled server is charged
 * for the requests that waited behind it (no coordinated omission). The send lag (due → written
 * to a socket) is reported apart: it is what the generator itself could not keep up with.
 *
 * Raw keep-alive sockets, one request at a time each, opened as needed up to `maxConnections`
 * (requests wait in order beyond that): a tracker provider's gateway posts this way, and an HTTP
 * client library would cost more CPU than the positions it measures on a 2-core machine. The
 * answers are Fastify's, with Content-Length, simple to frame.
 */
import { fork } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";

export interface Tracker {
  externalId: string;
  provider: string;
  token: string;
}

export interface TrackerFleetOptions {
  port: number;
  trackers: Tracker[];
  /** When the first position is due (epoch ms): the parent sets it so its clock and ours agree. */
  startAt: number;
  durationMs: number;
  maxConnections: number;
  /** No answer within this: the request counts as status 0 and its socket is closed. */
  timeoutMs: number;
}

/** Figures of one window (or of the whole run). */
export interface TrackerWindow {
  /** Seconds since startAt at the window's end. */
  atSeconds: number;
  /** Positions written to a socket in the window, per second. */
  offeredPerSecond: number;
  /** Positions never sent: they waited longer than timeoutMs for a free connection. */
  dropped: number;
  /** Answers 200 in the window, per second. */
  okPerSecond: number;
  /** Answers by status ("0": no answer: refused, reset or timed out). */
  statuses: Record<string, number>;
  /** Latency from when the position was due (open loop). */
  p50Ms: number;
  p99Ms: number;
  /** Latency from when it was written to its socket: the server's answer time alone. */
  sentP50Ms: number;
  sentP99Ms: number;
  /** Due → written, p99 and max: the generator's own delay. */
  lagP99Ms: number;
  lagMaxMs: number;
  /**
   * How late the generator's own timer ran, p99: when this is small and the lag large, the
   * positions waited for a connection, i.e. for the server's answers, not for the generator.
   */
  loopDelayP99Ms: number;
  /** The most connections open at once so far. */
  connections: number;
  /** Positions due but waiting for a free connection at the window's end. */
  queued: number;
}

export interface TrackerFleetResult extends TrackerWindow {
  sent: number;
  /** Positions due over the run: trackers × seconds. */
  due: number;
  /** 200s per tracker, in the order of `trackers`. */
  okPerTracker: number[];
  /** The generator's CPU time over the run, ms. */
  cpuMs: number;
  maxMs: number;
  sentMaxMs: number;
}

type Message = { type: "window"; window: TrackerWindow } | { type: "done"; result: TrackerFleetResult };

/**
 * Latency buckets: 0.1 ms wide up to 1 s, then 1 ms wide up to 60 s; the last bucket holds
 * everything slower.
 */
const FINE_BUCKETS = 10_000;
const BUCKETS = FINE_BUCKETS + 59_001;
const bucketOf = (ms: number) =>
  ms < 1000 ? Math.max(0, Math.floor(ms * 10)) : Math.min(BUCKETS - 1, FINE_BUCKETS + Math.floor(ms - 1000));
const upperBound = (bucket: number) => (bucket < FINE_BUCKETS ? (bucket + 1) / 10 : bucket - FINE_BUCKETS + 1001);

/** Latency percentiles from a histogram. */
class Histogram {
  counts = new Uint32Array(BUCKETS);
  total = 0;
  max = 0;
  add(ms: number) {
    const bucket = bucketOf(ms);
    this.counts[bucket] = (this.counts[bucket] as number) + 1;
    this.total++;
    if (ms > this.max) this.max = ms;
  }
  percentile(p: number): number {
    if (this.total === 0) return 0;
    const target = Math.ceil(this.total * p);
    let seen = 0;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      seen += this.counts[bucket] as number;
      if (seen >= target) return Math.round(Math.min(upperBound(bucket), this.max) * 10) / 10;
    }
    return Math.round(this.max * 10) / 10;
  }
}

interface Pending {
  tracker: number;
  dueAt: number;
  request: string;
}

interface Connection {
  socket: net.Socket;
  buffer: Buffer;
  current: (Pending & { sentAt: number }) | null;
  idleSince: number;
}

const TICK_MS = 2;

/** Connections idle this long are closed by us before the server's keep-alive timeout can race a request. */
const IDLE_CLOSE_MS = 20_000;

async function run(options: TrackerFleetOptions, report: (message: Message) => void) {
  const cpuStart = process.cpuUsage();
  const n = options.trackers.length;
  const intervalMs = 1000 / n;
  const paths = options.trackers.map((t) => `/external/vehicles/${encodeURIComponent(t.externalId)}/geolocations`);
  const okPerTracker = new Array<number>(n).fill(0);
  const newWindow = () => ({
    latency: new Histogram(),
    service: new Histogram(),
    lag: new Histogram(),
    loopDelay: new Histogram(),
    statuses: {} as Record<string, number>,
    sent: 0,
    dropped: 0,
  });
  const whole = newWindow();
  let window = newWindow();
  const idle: Connection[] = [];
  const busy = new Set<Connection>();
  let opening = 0;
  let mostConnections = 0;
  const queue: Pending[] = [];
  let queueHead = 0;
  let sequence = 0;
  const endAt = options.startAt + options.durationMs;
  let stopped = false;

  const build = (s: number): Pending => {
    const tracker = s % n;
    const second = Math.floor(s / n);
    const dueAt = options.startAt + s * intervalMs;
    const t = options.trackers[tracker] as Tracker;
    // A slow loop around a point, so consecutive positions differ as a moving vehicle's do.
    const angle = (second + tracker) / 60;
    const body = JSON.stringify({
      timestamp: new Date(Math.round(dueAt)).toISOString(),
      latitude: 48.85 + 0.05 * Math.sin(angle) + (tracker % 100) / 10_000,
      longitude: 2.35 + 0.05 * Math.cos(angle) + Math.floor(tracker / 100) / 10_000,
      provider: t.provider,
      tracker_id: tracker + 1,
    });
    const request =
      `POST ${paths[tracker]} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-provider-token: ${t.token}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    return { tracker, dueAt, request };
  };

  const record = (pending: Pending & { sentAt: number }, status: string, now: number) => {
    for (const w of [whole, window]) {
      w.statuses[status] = (w.statuses[status] ?? 0) + 1;
      w.latency.add(now - pending.dueAt);
      w.service.add(now - pending.sentAt);
    }
    if (status === "200") okPerTracker[pending.tracker] = (okPerTracker[pending.tracker] as number) + 1;
  };

  const send = (connection: Connection, pending: Pending) => {
    const now = performance.timeOrigin + performance.now();
    connection.current = { ...pending, sentAt: now };
    busy.add(connection);
    for (const w of [whole, window]) {
      w.sent++;
      w.lag.add(now - pending.dueAt);
    }
    connection.socket.write(pending.request);
  };

  const fail = (connection: Connection) => {
    busy.delete(connection);
    const index = idle.indexOf(connection);
    if (index >= 0) idle.splice(index, 1);
    if (connection.current) record(connection.current, "0", performance.timeOrigin + performance.now());
    connection.current = null;
    connection.socket.destroy();
    pump();
  };

  const open = () => {
    opening++;
    const socket = net.connect(options.port, "127.0.0.1");
    socket.setNoDelay(true);
    const connection: Connection = { socket, buffer: Buffer.alloc(0), current: null, idleSince: 0 };
    let connected = false;
    socket.once("connect", () => {
      connected = true;
      opening--;
      mostConnections = Math.max(mostConnections, busy.size + idle.length + 1);
      release(connection);
    });
    socket.on("data", (chunk: Buffer) => {
      connection.buffer = connection.buffer.length === 0 ? chunk : Buffer.concat([connection.buffer, chunk]);
      const headerEnd = connection.buffer.indexOf("\r\n\r\n");
      if (headerEnd < 0) return;
      const head = connection.buffer.subarray(0, headerEnd).toString("latin1");
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (connection.buffer.length < headerEnd + 4 + length) return;
      connection.buffer = connection.buffer.subarray(headerEnd + 4 + length);
      const current = connection.current;
      connection.current = null;
      busy.delete(connection);
      if (current) record(current, head.slice(9, 12), performance.timeOrigin + performance.now());
      if (/\r\nconnection:\s*close/i.test(head)) {
        socket.destroy();
        pump();
        return;
      }
      release(connection);
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      if (!connected) {
        opening--;
        // A refused connection costs the oldest waiting position, as a tracker whose connection
        // is refused loses its attempt: the queue always moves, even with the server gone.
        if (queueHead < queue.length) {
          const refused = queue[queueHead++] as Pending;
          for (const w of [whole, window]) w.sent++;
          record(
            { ...refused, sentAt: performance.timeOrigin + performance.now() },
            "0",
            performance.timeOrigin + performance.now(),
          );
        }
      }
      fail(connection);
    });
  };

  /**
   * The oldest waiting position still worth sending. One that waited longer than `timeoutMs` for a
   * connection is dropped, as a tracker gives up a send that cannot get through: with a server
   * that cannot keep up, the backlog (and the run's end) stays bounded, and the figures say how
   * many were never sent.
   */
  const next = (): Pending | undefined => {
    const now = performance.timeOrigin + performance.now();
    while (queueHead < queue.length) {
      const pending = queue[queueHead++] as Pending;
      if (queueHead > 4096) {
        queue.splice(0, queueHead);
        queueHead = 0;
      }
      if (now - pending.dueAt <= options.timeoutMs) return pending;
      whole.dropped++;
      window.dropped++;
    }
    return undefined;
  };

  /** A connection is free: it takes the oldest waiting position, or waits on the idle stack. */
  const release = (connection: Connection) => {
    const pending = next();
    if (pending) {
      send(connection, pending);
      return;
    }
    connection.idleSince = Date.now();
    idle.push(connection);
  };

  const pump = () => {
    while (queueHead < queue.length) {
      // Most recently used first: the cold ones at the bottom of the stack age out.
      const connection = idle.pop();
      if (connection) {
        const pending = next();
        if (pending) send(connection, pending);
        else idle.push(connection);
        continue;
      }
      const room = options.maxConnections - busy.size - opening;
      const wanted = Math.min(room, queue.length - queueHead - opening);
      for (let i = 0; i < wanted; i++) open();
      break;
    }
  };

  let lastTick = 0;
  const tick = () => {
    const now = performance.timeOrigin + performance.now();
    if (lastTick) for (const w of [whole, window]) w.loopDelay.add(now - lastTick - TICK_MS);
    lastTick = now;
    const until = Math.min(now, endAt);
    while (options.startAt + sequence * intervalMs <= until) queue.push(build(sequence++));
    pump();
    if (now < endAt && !stopped) setTimeout(tick, TICK_MS);
  };

  const housekeeping = setInterval(() => {
    const now = performance.timeOrigin + performance.now();
    for (const connection of busy) {
      if (connection.current && now - connection.current.sentAt > options.timeoutMs) fail(connection);
    }
    for (const connection of [...idle]) {
      if (Date.now() - connection.idleSince > IDLE_CLOSE_MS) {
        idle.splice(idle.indexOf(connection), 1);
        connection.socket.destroy();
      }
    }
  }, 500);

  const summary = (w: ReturnType<typeof newWindow>, seconds: number): TrackerWindow => ({
    atSeconds: Math.round((Date.now() - options.startAt) / 1000),
    offeredPerSecond: Math.round(w.sent / seconds),
    dropped: w.dropped,
    okPerSecond: Math.round((w.statuses["200"] ?? 0) / seconds),
    statuses: w.statuses,
    p50Ms: w.latency.percentile(0.5),
    p99Ms: w.latency.percentile(0.99),
    sentP50Ms: w.service.percentile(0.5),
    sentP99Ms: w.service.percentile(0.99),
    lagP99Ms: w.lag.percentile(0.99),
    lagMaxMs: Math.round(w.lag.max),
    loopDelayP99Ms: w.loopDelay.percentile(0.99),
    connections: mostConnections,
    queued: queue.length - queueHead,
  });

  await new Promise((resolve) => setTimeout(resolve, Math.max(0, options.startAt - Date.now())));
  let windowStart = Date.now();
  // The parent asks for a window when it samples the services, so both describe the same seconds.
  process.on("message", (message: { type: string }) => {
    if (message.type === "stop") stopped = true;
    if (message.type !== "window") return;
    const now = Date.now();
    report({ type: "window", window: summary(window, (now - windowStart) / 1000) });
    window = newWindow();
    windowStart = now;
  });
  tick();
  while (Date.now() < endAt && !stopped) await new Promise((resolve) => setTimeout(resolve, 100));
  // Stopped early: what was due and not yet sent is dropped, not sent late.
  if (stopped) queueHead = queue.length;
  const loadMs = Math.min(Date.now(), endAt) - options.startAt;
  // Whatever is still queued or in flight is answered (or times out) before the figures close.
  while (queueHead < queue.length || busy.size > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  clearInterval(housekeeping);
  for (const connection of idle) connection.socket.destroy();
  const cpu = process.cpuUsage(cpuStart);
  report({
    type: "done",
    result: {
      ...summary(whole, loadMs / 1000),
      sent: whole.sent,
      due: sequence,
      okPerTracker,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      maxMs: Math.round(whole.latency.max),
      sentMaxMs: Math.round(whole.service.max),
    },
  });
}

export interface TrackerFleet {
  /** The figures since the previous call (or the start); null once the run has ended. */
  window(): Promise<TrackerWindow | null>;
  /** Resolves with the run's figures once every position sent is answered or timed out. */
  done: Promise<TrackerFleetResult>;
  /** Ends the run before its duration (the figures are those of the time it ran). */
  stop(): void;
}

/** Forks the fleet. */
export function startTrackerFleet(options: TrackerFleetOptions): TrackerFleet {
  const child = fork(fileURLToPath(import.meta.url), ["child"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  child.send({ type: "start", options });
  const waiting: Array<(window: TrackerWindow | null) => void> = [];
  const done = new Promise<TrackerFleetResult>((resolve, reject) => {
    child.on("message", (message: Message) => {
      if (message.type === "window") waiting.shift()?.(message.window);
      else {
        resolve(message.result);
        child.disconnect();
        for (const pending of waiting.splice(0)) pending(null);
      }
    });
    child.on("exit", (code) => reject(new Error(`the tracker fleet exited (${code}) before its result`)));
  });
  // A run abandoned after a failure elsewhere is not awaited: its end must not crash the process.
  done.catch(() => {});
  return {
    window: () =>
      new Promise((resolve) => {
        if (!child.connected) return resolve(null);
        waiting.push(resolve);
        child.send({ type: "window" });
      }),
    done,
    stop: () => {
      if (child.connected) child.send({ type: "stop" });
    },
  };
}

if (process.argv[2] === "child") {
  process.once("message", (message: { type: "start"; options: TrackerFleetOptions }) => {
    void run(message.options, (m) => process.send?.(m));
  });
}
