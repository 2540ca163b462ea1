/**
 * The standard instrumentations, enabled once per process when tracing is on (never otherwise:
 * then nothing is patched, subscribed or wrapped):
 * - @fastify/otel: the server span of every HTTP request (probes and scrapes aside) and a child
 *   span for the route handler, continuing the caller's `traceparent`. It hooks every Fastify
 *   instance created afterwards (registerOnInitialization), so the kit's app factory needs
 *   nothing of its own.
 * - PostgreSQL (pg): a span per query and per connect, inside a trace only (a background poll
 *   outside any trace would make a root span per poll).
 * - undici (fetch and the undici package): a client span per outgoing request, inside a trace
 *   only, which sends `traceparent` to the receiver. Its URL is recorded as the origin alone: a
 *   webhook's or a provider's path and query may hold the receiver's secret.
 */
import FastifyOtel from "@fastify/otel";
import type { Span, TracerProvider } from "@opentelemetry/api";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import type { FastifyRequest } from "fastify";
import pg from "pg";
import { PROBE_PATHS } from "./health.ts";
import { URL_FOR_SPANS } from "./tracing-config.ts";

/**
 * Enables the instrumentations with this provider; returns what disables them again. Each is
 * enabled as it is made (the undici one reads `enabled` from its config at every request, so it
 * cannot be made disabled and enabled later).
 */
export function enableInstrumentations(tracerProvider: TracerProvider): () => void {
  const instrumentations = [
    new FastifyOtel.FastifyOtelInstrumentation({
      registerOnInitialization: true,
      // A span per hook would multiply the spans of every request by the kit's dozen hooks.
      instrumentHooks: false,
      ignorePaths: ({ url }) => PROBE_PATHS.has(url),
      requestHook: nameServerSpan,
    }),
    new PgInstrumentation({ requireParentSpan: true }),
    new UndiciInstrumentation({ requireParentforSpans: true, startSpanHook: originOnly }),
  ];
  for (const instrumentation of instrumentations) instrumentation.setTracerProvider(tracerProvider);
  patchLoadedPg(instrumentations[1] as PgInstrumentation);
  return () => {
    for (const instrumentation of instrumentations) instrumentation.disable();
  };
}

/**
 * The semantic conventions' name of an HTTP server span, `{method} {route}` (@fastify/otel says
 * "request"), and its `url.path` as the app's access line writes it.
 */
function nameServerSpan(span: Span, request: FastifyRequest) {
  const route = request.routeOptions.url;
  span.updateName(route ? `${request.method} ${route}` : request.method);
  const loggedUrl = (request.server as unknown as Record<symbol, ((url: string) => string) | undefined>)[URL_FOR_SPANS];
  if (loggedUrl) span.setAttribute("url.path", loggedUrl(request.url));
}

const REDACTED = "[redacted]";

function originOnly(request: { origin: string; path: string }) {
  return { "url.full": new URL(request.origin).origin, "url.path": REDACTED, "url.query": REDACTED };
}

/**
 * The instrumentation patches pg when it is loaded, but the kit loaded it before any config was
 * read: the loaded module (and pg-pool, the class pg.Pool extends) is patched here instead.
 * Recorded as the definitions' exports, so that disable() unpatches it.
 */
function patchLoadedPg(instrumentation: PgInstrumentation) {
  const loaded: Record<string, unknown> = { pg, "pg-pool": Object.getPrototypeOf(pg.Pool) };
  for (const definition of instrumentation.getModuleDefinitions()) {
    const exports = loaded[definition.name];
    if (!exports || !definition.patch) continue;
    definition.moduleExports = exports;
    definition.patch(exports);
  }
}
