import assert from "node:assert/strict";
import dc from "node:diagnostics_channel";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import pg from "pg";
import { createDatabase } from "./db.ts";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { contextFromNatsHeaders, natsTraceHeaders } from "./nats-tracing.ts";
import { lineSink, testInfra } from "./testing.ts";
import { contextFromTraceparent, initTracing, startSpan, traceparentOf } from "./tracing.ts";

const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

const exporter = new InMemorySpanExporter();
const tracing = await initTracing("tracing-test", {}, { exporters: [exporter], immediate: true });

describe("tracing on: the standard instrumentations, continuing the caller's traceparent", () => {
  const logLines: Array<Record<string, unknown>> = [];
  const sink = lineSink(logLines);
  const logger = createLogger("tracing-test", "info", sink);
  const database = createDatabase({ url: testInfra().databaseUrl, schema: "public", applicationName: "tracing-test" });
  const { app } = createHttpApp({
    service: "tracing-test",
    logger,
    lifecycle: createLifecycle(logger),
    checks: {},
    loggedUrl: (url) => url.replace(/^\/things\/[^/?]+/, "/things/[redacted]"),
  });
  // A receiver of the handler's outgoing request: what traceparent reached it.
  let received: string | undefined;
  const receiver = http.createServer((request, response) => {
    received = request.headers.traceparent as string | undefined;
    response.writeHead(204).end();
  });
  // The handler sees a span of the request as the active one: what it stores continues the trace.
  app.post("/things/:id", async (request) => {
    request.log.info("inside the handler");
    await database.pool.query("select 1 as one");
    const { port } = receiver.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/hooks/receiver-secret?token=t0ken`, {
      method: "POST",
      body: "{}",
    });
    return { stored: traceparentOf(), forwarded: answer.status };
  });
  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    await app.ready();
  });
  after(async () => {
    await app.close();
    await database.close();
    receiver.close();
    await tracing.shutdown();
  });

  const finished = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);

  test("a request with traceparent → a SERVER span of that trace; the handler, its query and its fetch below it", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/things/secret-7",
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, "content-type": "application/json" },
      payload: "{}",
    });
    assert.equal(response.statusCode, 200);
    const [server] = finished("POST /things/:id");
    assert.ok(server, JSON.stringify(exporter.getFinishedSpans().map((span) => span.name)));
    assert.equal(server.kind, SpanKind.SERVER);
    assert.equal(server.spanContext().traceId, CALLER_TRACE);
    assert.equal(server.parentSpanContext?.spanId, CALLER_SPAN);
    assert.equal(server.attributes["http.route"], "/things/:id");
    assert.equal(server.attributes["http.response.status_code"], 200);
    assert.equal(server.attributes["url.path"], "/things/[redacted]", "the URL as the app's access line writes it");

    const handler = exporter
      .getFinishedSpans()
      .find((span) => span.parentSpanContext?.spanId === server.spanContext().spanId);
    assert.ok(handler, "the route handler's span is a child of the server span");
    assert.equal(response.json().stored, `00-${CALLER_TRACE}-${handler.spanContext().spanId}-01`);

    const query = exporter.getFinishedSpans().find((span) => span.attributes["db.query.text"] === "select 1 as one");
    assert.ok(query, "a span of the PostgreSQL query");
    assert.equal(query.kind, SpanKind.CLIENT);
    assert.equal(query.parentSpanContext?.spanId, handler.spanContext().spanId);

    const [outgoing] = finished("POST");
    assert.ok(outgoing, "a span of the fetch");
    assert.equal(outgoing.kind, SpanKind.CLIENT);
    assert.equal(outgoing.parentSpanContext?.spanId, handler.spanContext().spanId);
    assert.equal(outgoing.attributes["http.response.status_code"], 204);
    const { port } = receiver.address() as AddressInfo;
    assert.equal(
      outgoing.attributes["url.full"],
      `http://127.0.0.1:${port}`,
      "the receiver's path and query are not recorded",
    );
    assert.doesNotMatch(JSON.stringify(outgoing.attributes), /secret|t0ken/);
    assert.equal(
      received,
      `00-${CALLER_TRACE}-${outgoing.spanContext().spanId}-01`,
      "the receiver's parent is the fetch",
    );
  });

  test("a log line written inside a span carries its trace_id and span_id", async () => {
    const line = logLines.find((l) => l.msg === "inside the handler");
    assert.equal(line?.trace_id, CALLER_TRACE);
    const handler = exporter.getFinishedSpans().find((span) => span.spanContext().spanId === line?.span_id);
    assert.ok(handler, `span_id ${String(line?.span_id)} is a span of the request`);
    const outside = createLogger("tracing-test", "info", sink);
    outside.info("outside any span");
    const quiet = logLines.find((l) => l.msg === "outside any span");
    assert.equal(quiet?.trace_id, undefined);
    assert.equal(quiet?.span_id, undefined);
  });

  test("the instrumentations are in place (what tracing-off.test.ts finds absent)", () => {
    assert.equal(app.hasPlugin("@fastify/otel"), true);
    assert.equal("__wrapped" in pg.Client.prototype.query, true);
    assert.equal(dc.hasSubscribers("undici:request:create"), true);
  });

  test("probes and scrapes have no span", async () => {
    exporter.reset();
    await app.inject({ method: "GET", url: "/livez" });
    await app.inject({ method: "GET", url: "/metrics" });
    assert.deepEqual(exporter.getFinishedSpans(), []);
  });

  test("a query outside any trace has no span (background polls make no root spans)", async () => {
    exporter.reset();
    await database.pool.query("select 2 as two");
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
