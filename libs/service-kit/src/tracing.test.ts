import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { contextFromNatsHeaders, natsTraceHeaders } from "./nats-tracing.ts";
import { contextFromTraceparent, initTracing, startSpan, traceparentOf } from "./tracing.ts";

const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

describe("tracing: one server span per request, continuing the caller's traceparent", () => {
  const exporter = new InMemorySpanExporter();
  const tracing = initTracing("tracing-test", {}, { exporters: [exporter], immediate: true });
  const logger = createLogger("tracing-test", "silent");
  const { app } = createHttpApp({ service: "tracing-test", logger, lifecycle: createLifecycle(logger), checks: {} });
  // The handler sees the request's span as the active one: what it stores continues the trace.
  app.post("/things/:id", async () => ({ stored: traceparentOf() }));
  before(async () => app.ready());
  after(async () => {
    await app.close();
    await tracing.shutdown();
  });

  test("a request with traceparent → a SERVER span of that trace, its id handed to the handler", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/things/7",
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, "content-type": "application/json" },
      payload: "{}",
    });
    assert.equal(response.statusCode, 200);
    const [span] = exporter.getFinishedSpans().filter((s) => s.name === "POST /things/:id");
    assert.ok(span);
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.spanContext().traceId, CALLER_TRACE);
    assert.equal(span.parentSpanContext?.spanId, CALLER_SPAN);
    assert.equal(span.attributes["http.response.status_code"], 200);
    assert.equal(response.json().stored, `00-${CALLER_TRACE}-${span.spanContext().spanId}-01`);
  });

  test("probes and scrapes have no span", async () => {
    exporter.reset();
    await app.inject({ method: "GET", url: "/livez" });
    await app.inject({ method: "GET", url: "/metrics" });
    assert.deepEqual(exporter.getFinishedSpans(), []);
  });

  test("a context stored as traceparent and sent in NATS headers is the same trace", () => {
    const stored = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
    const span = startSpan("tracing-test", "publish", {
      kind: SpanKind.PRODUCER,
      parent: contextFromTraceparent(stored),
    });
    const received = contextFromNatsHeaders(natsTraceHeaders(span));
    span?.end();
    const child = startSpan("tracing-test", "consume", { kind: SpanKind.CONSUMER, parent: received });
    child?.end();
    const [publish, consume] = exporter.getFinishedSpans().slice(-2);
    assert.equal(consume?.spanContext().traceId, CALLER_TRACE);
    assert.equal(consume?.parentSpanContext?.spanId, publish?.spanContext().spanId);
  });
});

describe("a gauge with collect is measured at each scrape", () => {
  test("the value read is the one collect set; a failing collect keeps the previous one", async () => {
    const metrics = createMetrics("gauge-test");
    let next: number | Error = 3;
    metrics.gauge("things_waiting", "Things waiting.", [], async (gauge) => {
      if (next instanceof Error) throw next;
      gauge.set(next);
    });
    assert.match(await metrics.registry.metrics(), /^things_waiting\{service="gauge-test"\} 3$/m);
    next = new Error("database down");
    assert.match(await metrics.registry.metrics(), /^things_waiting\{service="gauge-test"\} 3$/m);
  });
});
