/**
 * A webhook POST as a span of the event's trace: a child of the context stored at intake, and
 * the receiver gets it in `traceparent`. Without tracing (or a stored context) it is the plain POST.
 */
import { SERVICE_NAMES } from "@dos/contracts";
import { contextFromTraceparent, SpanKind, SpanStatusCode, startSpan, traceHeaders } from "@dos/service-kit";
import type { PostResult, WebhookClient } from "../delivery-http/webhook-client.ts";
import type { ClaimedMessage } from "../queue/queue.repository.ts";

export async function tracedPost(
  client: WebhookClient,
  message: ClaimedMessage,
  headers: Record<string, string>,
  traceparent: string | undefined,
): Promise<PostResult> {
  const span = startSpan(SERVICE_NAMES.webhookDispatcher, "webhook POST", {
    kind: SpanKind.CLIENT,
    parent: contextFromTraceparent(traceparent),
    attributes: {
      "http.request.method": "POST",
      "webhook.event_id": message.event_id,
      "webhook.endpoint_id": message.endpoint_id,
      "webhook.attempt": message.attempts + 1,
    },
  });
  if (!span) return client.post(message.url, headers, message.body);
  const result = await client.post(message.url, { ...headers, ...traceHeaders(span) }, message.body);
  if (result.statusCode !== null) span.setAttribute("http.response.status_code", result.statusCode);
  if (result.error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
  span.end();
  return result;
}
