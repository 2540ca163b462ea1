/**
 * OpenTelemetry tracing of a process: one tracer provider, W3C trace context, spans exported in
 * the background by a BatchSpanProcessor (a request never waits for an export), and the standard
 * instrumentations (HTTP server, PostgreSQL, undici; see tracing-instrumentations.ts). Off unless
 * an exporter is configured: then no instrumentation is enabled, every helper here is a cheap
 * test of one flag, and the services skip their span work entirely.
 *
 * Configured by the standard variables (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER,
 * OTEL_TRACES_SAMPLER_ARG, OTEL_EXPORTER_OTLP_ENDPOINT) and, for a file of spans, TRACES_FILE.
 * Trace context crosses NATS in message headers (`traceparent`, `tracestate`) and waits in the
 * outbox and the webhook queue as a stored `traceparent` string.
 */
import {
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanKind,
  type TextMapGetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { TracingConfig, TracingOptions } from "./tracing-config.ts";

/** What services need of the API, so they depend on the kit alone. */
export { type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
export type { TracingConfig, TracingOptions } from "./tracing-config.ts";

export interface Tracing {
  enabled: boolean;
  /** Exports the spans still buffered. */
  flush(): Promise<void>;
  /** Flushes, then stops the provider (the last step of a shutdown). */
  shutdown(): Promise<void>;
}

let enabled = false;
const DISABLED: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };

/** Whether spans are recorded in this process; hot paths test this before any span work. */
export const tracingEnabled = (): boolean => enabled;

/** The tracer of one service (its instrumentation scope name is the service). */
export const serviceTracer = (service: string): Tracer => trace.getTracer(service);

/**
 * Installs the process's tracer provider and the instrumentations when the configuration names
 * an exporter (or the caller gives one). Once per process, before the app is built (the HTTP
 * instrumentation hooks the Fastify instances created afterwards). The SDK and the
 * instrumentations (about 450 modules, a third of a service's) are loaded only then.
 */
export async function initTracing(
  service: string,
  config: TracingConfig,
  options: TracingOptions = {},
): Promise<Tracing> {
  if (!options.exporters?.length && !config.TRACES_FILE && !config.OTEL_EXPORTER_OTLP_ENDPOINT) return DISABLED;
  const { startTracerProvider } = await import("./tracing-sdk.ts");
  const provider = startTracerProvider(service, config, options);
  enabled = true;
  return {
    enabled: true,
    flush: provider.flush,
    async shutdown() {
      await provider.shutdown();
      enabled = false;
    },
  };
}

/** `trace_id` and `span_id` of the active span, for a log line (pino mixin); none outside a span. */
export function activeSpanFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

type Headers = Record<string, string | string[] | undefined>;
const recordGetter: TextMapGetter<Headers> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** The context a caller sent in W3C headers (HTTP request headers, lowercase). */
export function contextFromHeaders(headers: Headers): Context {
  return propagation.extract(ROOT_CONTEXT, headers, recordGetter);
}

/** The context of a stored `traceparent` (outbox row, queued webhook); the root context without one. */
export function contextFromTraceparent(traceparent: string | null | undefined): Context {
  return traceparent ? contextFromHeaders({ traceparent }) : ROOT_CONTEXT;
}

/** The `traceparent` of a span (or of the active one), to store beside work done later; null when none. */
export function traceparentOf(span?: Span): string | null {
  if (!enabled) return null;
  const of = span ?? trace.getActiveSpan();
  return of ? (traceHeaders(of).traceparent ?? null) : null;
}

/** W3C headers carrying a span's context, as a plain record (HTTP headers, NATS headers). */
export function traceHeaders(span: Span): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier;
}

export interface StartSpanOptions {
  kind: SpanKind;
  parent?: Context;
  links?: Link[];
  attributes?: Record<string, string | number | boolean>;
}

/** Starts a span of a service's tracer, or returns undefined when tracing is off (nothing to end). */
export function startSpan(service: string, name: string, options: StartSpanOptions): Span | undefined {
  if (!enabled) return undefined;
  const { parent = context.active(), ...rest } = options;
  return serviceTracer(service).startSpan(name, rest, parent);
}

/** A link to a span context found in a stored or received `traceparent`. */
export function linkTo(traceparent: string | null | undefined): Link[] {
  const spanContext: SpanContext | undefined = trace.getSpanContext(contextFromTraceparent(traceparent));
  return spanContext ? [{ context: spanContext }] : [];
}

/** Runs `fn` with `span` as the active span (its async continuations included). */
export function withActiveSpan<T>(span: Span | undefined, fn: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
}
