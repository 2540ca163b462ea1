/**
 * The OpenTelemetry SDK of a process whose tracing is on (tracing.ts loads this module only
 * then): the tracer provider with the configured exporters and sampler, W3C trace context, and
 * the standard instrumentations.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import { JsonLinesSpanExporter } from "./spans-file-exporter.ts";
import type { TracingConfig, TracingOptions } from "./tracing-config.ts";
import { enableInstrumentations } from "./tracing-instrumentations.ts";
import { samplerFromConfig } from "./tracing-sampler.ts";

export function startTracerProvider(service: string, config: TracingConfig, options: TracingOptions) {
  const exporters: SpanExporter[] = [...(options.exporters ?? [])];
  if (config.TRACES_FILE) exporters.push(new JsonLinesSpanExporter(config.TRACES_FILE));
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) exporters.push(otlpExporter(config.OTEL_EXPORTER_OTLP_ENDPOINT));
  const processor = (exporter: SpanExporter) =>
    options.immediate
      ? new SimpleSpanProcessor({ exporter })
      : // A full queue drops spans rather than holding memory or a request.
        new BatchSpanProcessor({ exporter, maxQueueSize: 4096, maxExportBatchSize: 512, scheduledDelayMillis: 2000 });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": config.OTEL_SERVICE_NAME || service }),
    sampler: samplerFromConfig(config.OTEL_TRACES_SAMPLER, config.OTEL_TRACES_SAMPLER_ARG),
    spanProcessors: exporters.map(processor),
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const disableInstrumentations = enableInstrumentations(provider);
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      disableInstrumentations();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

function otlpExporter(endpoint: string): SpanExporter {
  return new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces`, timeoutMillis: 5000 });
}
