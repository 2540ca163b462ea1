/**
 * Tracing off (no exporter configured) costs nothing: no instrumentation is enabled, so no
 * Fastify plugin, no wrapped pg method, no subscriber on undici's channels and no span. Its own
 * file: tracing is per process, and the on case lives in tracing.test.ts.
 */
import assert from "node:assert/strict";
import dc from "node:diagnostics_channel";
import { test } from "node:test";
import { trace } from "@opentelemetry/api";
import pg from "pg";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { initTracing, traceparentOf } from "./tracing.ts";

test("with no exporter: no instrumentation, no hook, no span", async () => {
  const tracing = await initTracing("off-test", { OTEL_TRACES_SAMPLER: "always_on", TRACES_FILE: "" });
  assert.equal(tracing.enabled, false);
  const logger = createLogger("off-test", "silent");
  const { app } = createHttpApp({ service: "off-test", logger, lifecycle: createLifecycle(logger), checks: {} });
  app.get("/things", async () => ({ stored: traceparentOf(), active: trace.getActiveSpan() !== undefined }));
  await app.ready();
  const answer = await app.inject({
    method: "GET",
    url: "/things",
    headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
  });
  assert.deepEqual(answer.json(), { stored: null, active: false });
  assert.equal(app.hasPlugin("@fastify/otel"), false);
  assert.equal("__wrapped" in pg.Client.prototype.query, false);
  assert.equal(dc.hasSubscribers("undici:request:create"), false);
  assert.equal(dc.hasSubscribers("fastify.initialization"), false);
  await app.close();
});
