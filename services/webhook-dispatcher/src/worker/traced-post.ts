/**
 * A webhook POST as a span of the event's trace: a child of the context stored at intake, and
 * the receiver gets it in `traceparent`. Without tracing (or a stored context) it is the plain POST.
 */
import { SERVICE_NAMES } from "@dos/contracts";
import { contextFromTraceparent, SpanKind, SpanStatusCode, startSpan, traceHeaders } from "@dos/service-kit";
import type { PostResult, WebhookClient } from "../delivery-http/webhook-client.ts";
import type { OutgoingWebhook } from "./sender.ts";

export async function tracedPost(
  client: WebhookClient,
  webhook: OutgoingWebhook,
  headers: Record<string, string>,
): Promise<PostResult> {
  const span = startSpan(SERVICE_NAMES.webhookDispatcher, "webhook POST", {
    kind: SpanKind.CLIENT,
    parent: contextFromTraceparent(webhook.traceparent),
    attributes: {
      "http.request.method": "POST",
      "webhook.event_id": webhook.eventId,
      "webhook.endpoint_id": webhook.endpointId,
      "webhook.attempt": webhook.attempt,
    },
  });
  if (!span) return client.post(webhook.url, headers, webhook.body);
  const result = await client.post(webhook.url, { ...headers, ...traceHeaders(span) }, webhook.body);
  if (result.statusCode !== null) span.setAttribute("http.response.status_code", result.statusCode);
  if (result.error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
  span.end();
  return result;
}
