/**
 * What the System page shows, read from the services' own endpoints: each one's readiness
 * (/readyz), the webhook backlog and dead letters (webhook-dispatcher's /metrics) and the
 * positions stored per second (geo-ingest's counter, its increase over the sampling interval).
 *
 * - Every address a service's host name resolves to is read as one replica: in Kubernetes the
 *   URLs name headless Services, so each pod is read (a counter is a pod's own, and a ClusterIP
 *   would hand each scrape to any pod), and a pod that is not ready is shown as such.
 * - One deadline per service (CONSOLE_SYSTEM_TIMEOUT_MS) covers its name lookup and its calls,
 *   which run side by side: a hung service is shown as not answering, and the page never waits
 *   longer than that for all of them.
 * - A reading is served for CONSOLE_SYSTEM_SAMPLE_SECONDS to every staff page (one scrape at a
 *   time, whoever asks), so N pages refreshing every few seconds cost one scrape per interval.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { ReplicaView, ServiceName, ServiceView, SystemView } from "../shared/page-shapes.ts";
import { parseMetrics, type Sample, total } from "./metrics-text.ts";

export interface SystemTarget {
  name: Exclude<ServiceName, "console">;
  url: string;
}

export interface SystemMonitorOptions {
  targets: SystemTarget[];
  timeoutMs: number;
  sampleMs: number;
  /** The console's own readiness (this replica), without a network call. */
  selfReadiness: () => Promise<{ status: number; body: string }>;
  now?: () => number;
}

/** Most replicas read per service: bounded work per reading, whatever the DNS answers. */
const MAX_REPLICAS = 32;
const READYZ_MAX_BYTES = 64 * 1024;
const METRICS_MAX_BYTES = 2 * 1024 * 1024;
/** A counter increase older than this is no "per second" any more: measured again instead. */
const MAX_RATE_WINDOW_MS = 5 * 60_000;

const WRITTEN = "geo_positions_written_total";
const STARTED = "process_start_time_seconds";
const METRICS: Partial<Record<ServiceName, ReadonlySet<string>>> = {
  "geo-ingest": new Set([WRITTEN, STARTED]),
  "webhook-dispatcher": new Set([
    "webhook_queue_depth",
    "webhook_oldest_pending_age_seconds",
    "webhook_consumer_pending_messages",
    "webhook_dead_letters_total",
  ]),
};

interface ReplicaReading {
  view: ReplicaView;
  metrics?: Map<string, Sample[]>;
}

/** A body of at most `max` bytes; past it the call is cut and refused. */
async function readLimited(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new Error(`answered more than ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Why a call got no answer, as a person reads it. */
function failure(error: unknown, timeoutMs: number): string {
  const { name, message, cause } = error as { name?: string; message?: string; cause?: { code?: string } };
  if (name === "TimeoutError" || name === "AbortError") return `no answer within ${timeoutMs} ms`;
  if (cause?.code === "ECONNREFUSED") return "connection refused";
  if (cause?.code) return `no answer (${cause.code})`;
  return message ? `no answer (${message})` : "no answer";
}

/** The readiness a /readyz answer tells: the kit's 503 lists its failing checks as `errors`. */
function readiness(status: number, body: string): Pick<ReplicaView, "state" | "problems"> {
  if (status === 200) return { state: "ready", problems: [] };
  let problems: string[] = [];
  try {
    const errors = (JSON.parse(body) as { errors?: unknown }).errors;
    if (Array.isArray(errors)) problems = errors.slice(0, 10).map((e) => String(e).slice(0, 300));
  } catch {}
  return { state: "not_ready", problems: problems.length > 0 ? problems : [`/readyz answered ${status}`] };
}

function until<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** The base URL of each replica: every address the host name resolves to (an http URL only; an https one is read by its name). */
async function replicaUrls(base: URL, signal: AbortSignal): Promise<URL[]> {
  const host = base.hostname.replace(/^\[|\]$/g, "");
  if (base.protocol !== "http:" || isIP(host) !== 0) return [base];
  const addresses = await until(lookup(host, { all: true }), signal);
  const unique = [...new Set(addresses.map((a) => (a.family === 6 ? `[${a.address}]` : a.address)))];
  return unique.slice(0, MAX_REPLICAS).map((address) => new URL(`http://${address}:${base.port || "80"}`));
}

/** A service's state from its replicas'. */
function serviceState(replicas: ReplicaView[]): ServiceView["state"] {
  const ready = replicas.filter((r) => r.state === "ready").length;
  if (replicas.length > 0 && ready === replicas.length) return "ready";
  if (ready > 0) return "degraded";
  return replicas.some((r) => r.state === "not_ready") ? "not_ready" : "not_answering";
}

export function createSystemMonitor(options: SystemMonitorOptions) {
  const now = options.now ?? Date.now;
  const { timeoutMs } = options;
  /** geo-ingest's counter at the last reading, per replica address: what a rate is measured from. */
  let previous = new Map<string, { started: number; written: number; at: number }>();
  let cached: { view: SystemView; at: number } | undefined;
  let running: Promise<SystemView> | undefined;

  async function readReplica(name: ServiceName, url: URL, signal: AbortSignal): Promise<ReplicaReading> {
    const address = url.host;
    const wanted = METRICS[name];
    try {
      const [ready, metrics] = await Promise.all([
        fetch(new URL("/readyz", url), { signal, redirect: "error" }).then(async (response) => ({
          status: response.status,
          body: await readLimited(response, READYZ_MAX_BYTES),
        })),
        wanted
          ? fetch(new URL("/metrics", url), { signal, redirect: "error" }).then(async (response) => {
              if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
              return parseMetrics(await readLimited(response, METRICS_MAX_BYTES), wanted);
            })
          : undefined,
      ]);
      return { view: { address, ...readiness(ready.status, ready.body) }, ...(metrics ? { metrics } : {}) };
    } catch (error) {
      return { view: { address, state: "not_answering", problems: [failure(error, timeoutMs)] } };
    }
  }

  async function readService(target: SystemTarget): Promise<{ view: ServiceView; readings: ReplicaReading[] }> {
    const signal = AbortSignal.timeout(timeoutMs);
    let urls: URL[];
    try {
      urls = await replicaUrls(new URL(target.url), signal);
    } catch (error) {
      const host = new URL(target.url).hostname;
      const problem =
        (error as { name?: string }).name === "TimeoutError"
          ? `its name ${host} did not resolve within ${timeoutMs} ms`
          : `its name ${host} does not resolve`;
      return { view: { name: target.name, state: "not_answering", replicas: [], problems: [problem] }, readings: [] };
    }
    const readings = await Promise.all(urls.map((url) => readReplica(target.name, url, signal)));
    const replicas = readings.map((r) => r.view);
    return { view: { name: target.name, state: serviceState(replicas), replicas, problems: [] }, readings };
  }

  async function readSelf(): Promise<ServiceView> {
    let replica: ReplicaView;
    try {
      const answer = await options.selfReadiness();
      replica = { address: "this replica", ...readiness(answer.status, answer.body) };
    } catch (error) {
      replica = { address: "this replica", state: "not_ready", problems: [(error as Error).message] };
    }
    return { name: "console", state: serviceState([replica]), replicas: [replica], problems: [] };
  }

  function webhooksOf(readings: ReplicaReading[]): SystemView["webhooks"] {
    const read = readings.flatMap((r) => (r.metrics ? [r.metrics] : []));
    const max = (name: string) => {
      const values = read.flatMap((m) => (m.has(name) ? [total(m, name) as number] : []));
      return values.length > 0 ? Math.max(...values) : null;
    };
    const sum = (name: string) => {
      const values = read.flatMap((m) => (m.has(name) ? [total(m, name) as number] : []));
      return values.length > 0 ? values.reduce((a, b) => a + b, 0) : null;
    };
    const byReason: Record<string, number> = {};
    for (const sample of read.flatMap((m) => m.get("webhook_dead_letters_total") ?? [])) {
      const reason = sample.labels.reason ?? "unknown";
      byReason[reason] = (byReason[reason] ?? 0) + sample.value;
    }
    return {
      replicas_read: read.length,
      // The queue is the database's: every replica measures the same one (the freshest is the largest or equal).
      backlog: max("webhook_queue_depth"),
      oldest_pending_age_seconds: max("webhook_oldest_pending_age_seconds"),
      events_not_taken_in: sum("webhook_consumer_pending_messages"),
      dead_lettered_since_start: read.length > 0 ? (sum("webhook_dead_letters_total") ?? 0) : null,
      dead_lettered_by_reason: byReason,
    };
  }

  function positionsOf(readings: ReplicaReading[], at: number): SystemView["positions"] {
    const next = new Map<string, { started: number; written: number; at: number }>();
    let perSecond = 0;
    let measured = 0;
    let window = 0;
    let stored = 0;
    for (const reading of readings) {
      const written = reading.metrics && total(reading.metrics, WRITTEN);
      if (written === undefined) continue;
      const started = (reading.metrics && total(reading.metrics, STARTED)) ?? 0;
      stored += written;
      const before = previous.get(reading.view.address);
      next.set(reading.view.address, { started, written, at });
      // Another process at that address (restarted), or a counter that went back: no rate this time.
      if (!before || before.started !== started || written < before.written) continue;
      const elapsed = at - before.at;
      if (elapsed <= 0 || elapsed > MAX_RATE_WINDOW_MS) continue;
      perSecond += (written - before.written) / (elapsed / 1000);
      window = Math.max(window, elapsed / 1000);
      measured++;
    }
    // Replicas gone from the DNS answer are forgotten: the map holds the current ones only.
    previous = next;
    return {
      replicas_read: next.size,
      replicas_measured: measured,
      per_second: measured > 0 ? Math.round(perSecond * 100) / 100 : null,
      window_seconds: measured > 0 ? Math.round(window * 10) / 10 : null,
      stored_since_start: next.size > 0 ? stored : null,
    };
  }

  async function sample(): Promise<SystemView> {
    const [services, self] = await Promise.all([Promise.all(options.targets.map(readService)), readSelf()]);
    const at = now();
    const readingsOf = (name: ServiceName) => services.find((s) => s.view.name === name)?.readings ?? [];
    return {
      sampled_at: new Date(at).toISOString(),
      sample_seconds: options.sampleMs / 1000,
      timeout_ms: timeoutMs,
      services: [...services.map((s) => s.view), self],
      webhooks: webhooksOf(readingsOf("webhook-dispatcher")),
      positions: positionsOf(readingsOf("geo-ingest"), at),
    };
  }

  return {
    /** The latest reading, taken now if the last one is older than the sampling interval; one at a time. */
    async read(): Promise<SystemView> {
      if (cached && now() - cached.at < options.sampleMs) return cached.view;
      running ??= sample()
        .then((view) => {
          cached = { view, at: now() };
          return view;
        })
        .finally(() => {
          running = undefined;
        });
      return running;
    },
  };
}
export type SystemMonitor = ReturnType<typeof createSystemMonitor>;
