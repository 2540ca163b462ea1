/**
 * Prometheus metrics: one registry per app (so tests can build several), the process defaults,
 * HTTP request durations by route, and a place for each service's domain metrics.
 */
import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from "prom-client";

export interface AppMetrics {
  registry: Registry;
  counter(name: string, help: string, labelNames?: string[]): Counter<string>;
  /**
   * `collect`, when given, runs at each scrape before the value is read (a cheap query or a
   * look at some state); a failing one leaves the previous value and the scrape still answers.
   */
  gauge(
    name: string,
    help: string,
    labelNames?: string[],
    collect?: (gauge: Gauge<string>) => void | Promise<void>,
  ): Gauge<string>;
  histogram(name: string, help: string, labelNames?: string[], buckets?: number[]): Histogram<string>;
}

/** How often the event-loop delay (`nodejs_eventloop_lag_*`) is sampled. */
const EVENT_LOOP_SAMPLE_MS = 100;

export function createMetrics(service: string): AppMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  // The event-loop delay histogram samples on a timer: prom-client's default, every 10 ms, wakes
  // each service 100 times a second whatever it does (measured: most of an idle service's
  // wake-ups, each costing tens of microseconds on a loaded machine). Every 100 ms still catches
  // every stall longer than that, the ones worth an alert, at a tenth of the wake-ups.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return {
    registry,
    counter: (name, help, labelNames = []) => new Counter({ name, help, labelNames, registers: [registry] }),
    gauge: (name, help, labelNames = [], collect) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        ...(collect
          ? {
              async collect(this: Gauge<string>) {
                await Promise.resolve(collect(this)).catch(() => {});
              },
            }
          : {}),
      }),
    histogram: (name, help, labelNames = [], buckets) =>
      new Histogram({ name, help, labelNames, registers: [registry], ...(buckets ? { buckets } : {}) }),
  };
}

const DURATION_NAME = "http_request_duration_seconds";
const DURATION_HELP = "HTTP request duration by method, route and status.";
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Counts of one label set: per bucket (not cumulative; the last one is +Inf), sum and count. */
interface Series {
  labels: Record<string, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * The HTTP duration histogram, observed at every answer of every service. prom-client's
 * Histogram converts, validates and hashes the labels and string-keys the bucket at each
 * observation (about 0.7 µs); here each method, route and status keeps its counts in an array,
 * found by the route's own hook, and the registry reads them at scrape time. It is a registry
 * metric as prom-client's are (the `getForPromString`/`get` shape its Histogram returns), so
 * the exposition is the same text.
 */
export class DurationHistogram {
  readonly name = DURATION_NAME;
  readonly help = DURATION_HELP;
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #series: Series[] = [];

  /** The series of one label set, created once; observe through `observe(series, seconds)`. */
  series(method: string, route: string, statusCode: number): Series {
    const series: Series = {
      labels: { method, route, status_code: String(statusCode) },
      buckets: new Float64Array(DURATION_BUCKETS.length + 1),
      sum: 0,
      count: 0,
    };
    this.#series.push(series);
    return series;
  }

  observe(series: Series, seconds: number) {
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] as number)) bucket++;
    (series.buckets[bucket] as number)++;
    series.sum += seconds;
    series.count++;
  }

  async getForPromString() {
    const values: Array<{
      labels: Record<string, string | number>;
      sharedLabels: Record<string, string>;
      value: number;
      metricName: string;
      exemplar: null | undefined;
    }> = [];
    for (const series of this.#series) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += series.buckets[i] as number;
        values.push({
          labels: { le },
          sharedLabels: series.labels,
          value: cumulative,
          metricName: `${this.name}_bucket`,
          exemplar: null,
        });
      });
      values.push(
        {
          labels: { le: "+Inf" },
          sharedLabels: series.labels,
          value: series.count,
          metricName: `${this.name}_bucket`,
          exemplar: null,
        },
        {
          labels: {},
          sharedLabels: series.labels,
          value: series.sum,
          metricName: `${this.name}_sum`,
          exemplar: undefined,
        },
        {
          labels: {},
          sharedLabels: series.labels,
          value: series.count,
          metricName: `${this.name}_count`,
          exemplar: undefined,
        },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As JSON (registry.getMetricsAsJSON): each value's labels with its series' labels. */
  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...value }) => ({
        ...value,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  reset() {
    for (const series of this.#series) {
      series.buckets.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}

/** Records one answer of a route: its method, status and duration. */
export type DurationRecorder = (method: string, statusCode: number, seconds: number) => void;

/** Each route's series, by status and method (few of each), created at their first answer. */
function routeRecorder(duration: DurationHistogram, route: string): DurationRecorder {
  const byStatus = new Map<number, Map<string, Series>>();
  return (method, statusCode, seconds) => {
    let byMethod = byStatus.get(statusCode);
    if (byMethod === undefined) {
      byMethod = new Map();
      byStatus.set(statusCode, byMethod);
    }
    let series = byMethod.get(method);
    if (series === undefined) {
      series = duration.series(method, route, statusCode);
      byMethod.set(method, series);
    }
    duration.observe(series, seconds);
  };
}

export interface RegisteredMetrics {
  metrics: AppMetrics;
  /**
   * The duration recorder of a route (its URL as registered): the one its Fastify hook uses, so
   * that answers given outside Fastify (a hot route) land in the same series.
   */
  durationsOf(route: string): DurationRecorder;
}

export function registerMetrics(app: FastifyInstance, service: string): RegisteredMetrics {
  const metrics = createMetrics(service);
  const duration = new DurationHistogram();
  metrics.registry.registerMetric(duration as unknown as Metric);
  const recorders = new Map<string, DurationRecorder>();
  const durationsOf = (route: string) => {
    let record = recorders.get(route);
    if (record === undefined) {
      record = routeRecorder(duration, route);
      recorders.set(route, record);
    }
    return record;
  };
  // Each route observes through a hook of its own, which knows its route: request.routeOptions
  // builds a new object at every read. Answers no route matched are observed by the app's hook.
  app.addHook("onRoute", (route) => {
    const record = durationsOf(route.url);
    const own =
      route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    route.onResponse = [
      ...own,
      (request, reply, done) => {
        record(request.method, reply.statusCode, reply.elapsedTime / 1000);
        done();
      },
    ];
  });
  const unmatched = routeRecorder(duration, "unmatched");
  app.addHook("onResponse", (request, reply, done) => {
    if (request.is404) unmatched(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get("/metrics", async (_request, reply) => {
    reply.header("content-type", metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  return { metrics, durationsOf };
}
