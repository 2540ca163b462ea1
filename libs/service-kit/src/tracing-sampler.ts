/**
 * The sampler named by the standard variables OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG,
 * with the values and defaults of the OpenTelemetry SDK configuration spec (the trace SDK alone
 * no longer reads them; the Node SDK does, and we do not run it). The remote samplers (Jaeger,
 * X-Ray) are not offered: the config schema refuses them at boot.
 */
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace";
import type { SamplerName } from "./tracing-config.ts";

/** `ratio` is OTEL_TRACES_SAMPLER_ARG: read by the two ratio samplers only, 1 when unset. */
export function samplerFromConfig(name: SamplerName = "parentbased_always_on", ratio = 1): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}
