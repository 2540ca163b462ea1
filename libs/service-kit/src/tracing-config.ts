/**
 * What the rest of the kit names of tracing without loading the OpenTelemetry SDK, which a
 * process loads only when tracing is on (tracing.ts): the configuration, the sampler names the
 * config schema accepts, and where an app keeps the URL its spans record.
 */
import type { SpanExporter } from "@opentelemetry/sdk-trace";

export const SAMPLER_NAMES = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLER_NAMES)[number];

export interface TracingConfig {
  /** The `service.name` of every span; empty: the service's own name. */
  OTEL_SERVICE_NAME?: string;
  /** OTLP/HTTP collector base URL (`…:4318`); spans go to `<url>/v1/traces`. Empty: not exported there. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** The sampler, by its standard name; parentbased_always_on when unset. */
  OTEL_TRACES_SAMPLER?: SamplerName;
  /** The ratio of the two traceidratio samplers. */
  OTEL_TRACES_SAMPLER_ARG?: number;
  /** A file that every finished span is appended to as one JSON line. Empty: none. */
  TRACES_FILE?: string;
}

export interface TracingOptions {
  /** Exporters given by the caller (tests: an InMemorySpanExporter), beside the configured ones. */
  exporters?: SpanExporter[];
  /** Export each span as it ends instead of in batches (tests, so spans are there at once). */
  immediate?: boolean;
}

/** Where an app keeps its createHttpApp `loggedUrl` (a service whose paths hold secrets hides them). */
export const URL_FOR_SPANS = Symbol("url written to spans");
