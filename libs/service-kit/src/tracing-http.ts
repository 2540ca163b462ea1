/**
 * The server span of every HTTP request (probes and scrapes aside): started when the request
 * arrives, continuing the caller's `traceparent`, made the active span for the route handler
 * (so the handler's spans and stored trace contexts are its children), ended with the answer.
 * Registered only when tracing is on: otherwise a request pays nothing.
 */
import { context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { contextFromHeaders, serviceTracer, tracingEnabled } from "./tracing.ts";

const spans = new WeakMap<FastifyRequest, Span>();

export function registerHttpTracing(
  app: FastifyInstance,
  service: string,
  skip: (request: FastifyRequest) => boolean,
  loggedUrl: (url: string) => string,
) {
  if (!tracingEnabled()) return;
  const tracer = serviceTracer(service);
  app.addHook("onRequest", (request, _reply, done) => {
    if (skip(request)) return done();
    const route = request.routeOptions.url ?? "unmatched";
    const span = tracer.startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": request.method, "http.route": route, "url.path": loggedUrl(request.url) },
      },
      contextFromHeaders(request.headers),
    );
    spans.set(request, span);
    done();
  });
  // The last hook before the handler: the handler runs, synchronously, inside the span's context.
  app.addHook("preHandler", (request, _reply, done) => {
    const span = spans.get(request);
    if (!span) return done();
    context.with(trace.setSpan(context.active(), span), done);
  });
  app.addHook("onResponse", (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttribute("http.response.status_code", reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      spans.delete(request);
    }
    done();
  });
  app.addHook("onRequestAbort", (request, done) => {
    const span = spans.get(request);
    if (span) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: "client aborted" });
      span.end();
      spans.delete(request);
    }
    done();
  });
}
