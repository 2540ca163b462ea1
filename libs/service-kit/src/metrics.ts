/**
 * Prometheus metrics: one registry per app (so tests can build several), the process defaults,
 * HTTP request durations by route, and a place for each service's domain metrics.
 */
import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

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

export function createMetrics(service: string): AppMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
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

export function registerMetrics(app: FastifyInstance, service: string): AppMetrics {
  const metrics = createMetrics(service);
  const duration = metrics.histogram(
    "http_request_duration_seconds",
    "HTTP request duration by method, route and status.",
    ["method", "route", "status_code"],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  // One bound child per method, route and status: observing through a labels object hashes
  // the labels on every request.
  const children = new Map<string, ReturnType<typeof duration.labels>>();
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    const key = `${reply.statusCode} ${request.method} ${route}`;
    let child = children.get(key);
    if (child === undefined) {
      child = duration.labels({ method: request.method, route, status_code: String(reply.statusCode) });
      children.set(key, child);
    }
    child.observe(reply.elapsedTime / 1000);
    done();
  });
  app.get("/metrics", async (_request, reply) => {
    reply.header("content-type", metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  return metrics;
}
