import assert from "node:assert/strict";
import { test } from "node:test";
import { ROOT_CONTEXT, SpanKind, TraceFlags, trace } from "@opentelemetry/api";
import { SamplingDecision } from "@opentelemetry/sdk-trace";
import { samplerFromConfig } from "./tracing-sampler.ts";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const sampledParent = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: TRACE_ID,
  spanId: "b7ad6b7169203331",
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
});
const decide = (sampler: ReturnType<typeof samplerFromConfig>, parent = ROOT_CONTEXT) =>
  sampler.shouldSample(parent, TRACE_ID, "span", SpanKind.SERVER, {}, []).decision;

test("parentbased_traceidratio at 0 records no trace of its own but follows a sampled caller", () => {
  const sampler = samplerFromConfig("parentbased_traceidratio", 0);
  assert.equal(decide(sampler), SamplingDecision.NOT_RECORD);
  assert.equal(decide(sampler, sampledParent), SamplingDecision.RECORD_AND_SAMPLED);
});

test("traceidratio at 0 ignores the caller; always_off records nothing; the default records all", () => {
  assert.equal(decide(samplerFromConfig("traceidratio", 0), sampledParent), SamplingDecision.NOT_RECORD);
  assert.equal(decide(samplerFromConfig("always_off"), sampledParent), SamplingDecision.NOT_RECORD);
  assert.equal(decide(samplerFromConfig()), SamplingDecision.RECORD_AND_SAMPLED);
});
