import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Histogram, type Metric, Registry } from "prom-client";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { DurationHistogram } from "./metrics.ts";

describe("the HTTP duration histogram", () => {
  test("is exposed as prom-client's Histogram exposes the same observations", async () => {
    const observations: Array<[string, string, number, number]> = [
      ["GET", "/a/:id", 200, 0.0004],
      ["GET", "/a/:id", 200, 0.001],
      ["GET", "/a/:id", 200, 0.0031],
      ["GET", "/a/:id", 404, 0.02],
      ["POST", "/b", 201, 7],
      ["POST", "/b", 201, 0.5],
    ];
    const expected = new Registry();
    expected.setDefaultLabels({ service: "s" });
    const histogram = new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request duration by method, route and status.",
      labelNames: ["method", "route", "status_code"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [expected],
    });
    const actual = new Registry();
    actual.setDefaultLabels({ service: "s" });
    const duration = new DurationHistogram();
    actual.registerMetric(duration as unknown as Metric);
    const series = new Map<string, ReturnType<DurationHistogram["series"]>>();
    for (const [method, route, status, seconds] of observations) {
      histogram.labels({ method, route, status_code: String(status) }).observe(seconds);
      const key = `${method} ${route} ${status}`;
      if (!series.has(key)) series.set(key, duration.series(method, route, status));
      duration.observe(series.get(key) as ReturnType<DurationHistogram["series"]>, seconds);
    }
    assert.equal(await actual.metrics(), await expected.metrics());
    assert.deepEqual(await actual.getMetricsAsJSON(), await expected.getMetricsAsJSON());
  });

  describe("of an app", () => {
    const logger = createLogger("metrics-test", "silent");
    const { app } = createHttpApp({ service: "metrics-test", logger, lifecycle: createLifecycle(logger), checks: {} });
    app.get("/things/:id", async (request, reply) =>
      (request.params as { id: string }).id === "0" ? reply.code(404).send({ errors: ["no such thing"] }) : {},
    );
    before(async () => app.ready());
    after(async () => app.close());

    test("counts each answer under its route and status, and answers no route matched as unmatched", async () => {
      for (const url of ["/things/1", "/things/2", "/things/0", "/nowhere"]) await app.inject({ method: "GET", url });
      await app.inject({ method: "HEAD", url: "/things/1" });
      const text = (await app.inject({ method: "GET", url: "/metrics" })).body;
      const count = (labels: string) =>
        Number(
          new RegExp(`^http_request_duration_seconds_count\\{service="metrics-test",${labels}\\} (\\d+)$`, "m").exec(
            text,
          )?.[1],
        );
      assert.equal(count('method="GET",route="/things/:id",status_code="200"'), 2);
      assert.equal(count('method="GET",route="/things/:id",status_code="404"'), 1);
      assert.equal(count('method="HEAD",route="/things/:id",status_code="200"'), 1);
      assert.equal(count('method="GET",route="unmatched",status_code="404"'), 1);
    });
  });
});
