/**
 * A span exporter of the SDK's kind that appends each finished span to a file as one JSON line:
 * development, and the tests that follow one trace across processes (TRACES_FILE). OTLP is the
 * production path; this one writes synchronously and is not meant for production traffic.
 */
import { appendFileSync } from "node:fs";
import { type ExportResult, ExportResultCode, hrTimeToMicroseconds } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";

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
function spanRecord(span: ReadableSpan) {
  const { traceId, spanId } = span.spanContext();
  return {
    service: span.resource.attributes["service.name"],
    // Which code made it: the service's own tracer, @fastify/otel, the pg or undici instrumentation.
    scope: span.instrumentationScope.name,
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
