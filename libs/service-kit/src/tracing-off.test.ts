/**
 * Tracing off (no exporter configured) costs nothing: no instrumentation is enabled, so no
 * Fastify plugin, no wrapped pg method, no subscriber on undici's channels and no span. Its own
 * file: tracing is per process, and the on case lives in tracing.test.ts.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
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

test("with no exporter, a process that imports the kit loads neither the SDK nor an instrumentation", () => {
  // In a process of its own, which records every module it loads: this file has loaded the kit.
  const loaded = execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { registerHooks } from "node:module";
       const urls = [];
       registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });
       await import(${JSON.stringify(new URL("./index.ts", import.meta.url).href)});
       console.log(JSON.stringify(urls));`,
    ],
    { encoding: "utf8" },
  );
  const urls = JSON.parse(loaded) as string[];
  assert.ok(
    urls.some((url) => url.includes("/fastify/")),
    "the kit was loaded",
  );
  const sdk = urls.filter((url) =>
    /@opentelemetry\/(sdk-|exporter-|instrumentation|core\/)|@fastify\/otel|tracing-sdk/.test(url),
  );
  assert.deepEqual(sdk, []);
});
