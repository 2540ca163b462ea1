/**
 * OpenTelemetry tracing of a process: one tracer provider, W3C trace context, spans exported in
 * the background by a BatchSpanProcessor (a request never waits for an export). Off unless an
 * exporter is configured: then every helper here is a cheap test of one flag, and the services
 * skip their span work entirely.
 *
 * Trace context crosses NATS in message headers (`traceparent`, `tracestate`) and waits in the
 * outbox and the webhook queue as a stored `traceparent` string.
 */
import { appendFileSync } from "node:fs";
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
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  type ExportResult,
  ExportResultCode,
  hrTimeToMicroseconds,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";

/** What services need of the API, so they depend on the kit alone. */
export { type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";

export interface TracingConfig {
  /** OTLP/HTTP collector base URL (`…:4318`); spans go to `<url>/v1/traces`. Empty: not exported there. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** A file that every finished span is appended to as one JSON line. Empty: none. */
  OTEL_TRACES_FILE?: string;
  /** Share of traces started here that are recorded (a trace coming in keeps its caller's decision). */
  OTEL_TRACES_SAMPLE_RATIO?: number;
}

export interface Tracing {
  enabled: boolean;
  /** Exports the spans still buffered. */
  flush(): Promise<void>;
  /** Flushes, then stops the provider (the last step of a shutdown). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Exporters given by the caller (tests: an InMemorySpanExporter), beside the configured ones. */
  exporters?: SpanExporter[];
  /** Export each span as it ends instead of in batches (tests, so spans are there at once). */
  immediate?: boolean;
}

let enabled = false;
const DISABLED: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };

/** Whether spans are recorded in this process; hot paths test this before any span work. */
export const tracingEnabled = (): boolean => enabled;

/** The tracer of one service (its instrumentation scope name is the service). */
export const serviceTracer = (service: string): Tracer => trace.getTracer(service);

/**
 * Installs the process's tracer provider when the configuration names an exporter (or the caller
 * gives one). Once per process: several apps in one process (tests) share it and tell their
 * spans apart by their tracer's name.
 */
export function initTracing(service: string, config: TracingConfig, options: TracingOptions = {}): Tracing {
  const exporters: SpanExporter[] = [...(options.exporters ?? [])];
  if (config.OTEL_TRACES_FILE) exporters.push(new JsonLinesSpanExporter(config.OTEL_TRACES_FILE));
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) exporters.push(otlpExporter(config.OTEL_EXPORTER_OTLP_ENDPOINT));
  if (exporters.length === 0) return DISABLED;

  const processor = (exporter: SpanExporter) =>
    options.immediate
      ? new SimpleSpanProcessor({ exporter })
      : // A full queue drops spans rather than holding memory or a request.
        new BatchSpanProcessor({ exporter, maxQueueSize: 4096, maxExportBatchSize: 512, scheduledDelayMillis: 2000 });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLE_RATIO ?? 1) }),
    spanProcessors: exporters.map(processor),
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  enabled = true;
  return {
    enabled: true,
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      enabled = false;
    },
  };
}

function otlpExporter(endpoint: string): SpanExporter {
  return new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces`, timeoutMillis: 5000 });
}

/** Writes each span as one JSON line (development, and the cross-process trace test). */
export class JsonLinesSpanExporter implements SpanExporter {
  readonly #path: string;
  constructor(path: string) {
    this.#path = path;
  }
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      appendFileSync(this.#path, spans.map((span) => `${JSON.stringify(spanRecord(span))}\n`).join(""));
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }
  async shutdown() {}
  async forceFlush() {}
}

/** The fields of a finished span a reader needs, flat. */
export function spanRecord(span: ReadableSpan) {
  const { traceId, spanId } = span.spanContext();
  return {
    service: span.instrumentationScope.name,
    name: span.name,
    kind: span.kind,
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: span.parentSpanContext?.spanId ?? null,
    links: span.links.map((link) => ({ trace_id: link.context.traceId, span_id: link.context.spanId })),
    start_us: hrTimeToMicroseconds(span.startTime),
    duration_us: hrTimeToMicroseconds(span.duration),
    status: span.status.code,
    attributes: span.attributes,
  };
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
