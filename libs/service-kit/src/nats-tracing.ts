/**
 * Trace context in NATS message headers (`traceparent`, `tracestate`): a request or a published
 * event carries its sender's span, and the receiver continues the same trace.
 */

import { headers, type MsgHdrs } from "@nats-io/transport-node";
import { type Context, propagation, ROOT_CONTEXT, type Span, type TextMapGetter } from "@opentelemetry/api";
import { traceHeaders, tracingEnabled } from "./tracing.ts";

/** What is read of message headers (any nats-core version's MsgHdrs fits). */
export interface ReadableHeaders {
  get(key: string): string;
  keys(): string[];
}

const natsGetter: TextMapGetter<ReadableHeaders> = {
  keys: (carrier) => carrier.keys(),
  get: (carrier, key) => carrier.get(key) || undefined,
};

/** Message headers carrying a span's context; undefined when there is no span (tracing off). */
export function natsTraceHeaders(span: Span | undefined, into?: MsgHdrs): MsgHdrs | undefined {
  if (!span) return into;
  const hdrs = into ?? headers();
  for (const [key, value] of Object.entries(traceHeaders(span))) hdrs.set(key, value);
  return hdrs;
}

/** The context a message's sender put in its headers; the root context when none. */
export function contextFromNatsHeaders(hdrs: ReadableHeaders | undefined): Context {
  if (!hdrs || !tracingEnabled()) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, hdrs, natsGetter);
}

/** The `traceparent` header of a message, as received (to store it with the work it starts). */
export function traceparentHeader(hdrs: ReadableHeaders | undefined): string | null {
  return hdrs?.get("traceparent") || null;
}
