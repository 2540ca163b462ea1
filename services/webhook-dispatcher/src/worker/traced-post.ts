/**
 * A webhook POST as a span of the event's trace: a child of the context stored at intake, with
 * the event, endpoint and attempt. The HTTP request itself is the undici instrumentation's client
 * span, its child, which sends the receiver `traceparent`. Without tracing it is the plain POST.
 */
import { SERVICE_NAMES } from "@dos/contracts";
import { contextFromTraceparent, SpanKind, SpanStatusCode, startSpan, withActiveSpan } from "@dos/service-kit";
import type { PostResult, WebhookClient } from "../delivery-http/webhook-client.ts";

/** A webhook about to be POSTed: the event's exact body to one endpoint. */
export interface OutgoingWebhook {
  endpointId: string;
  url: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
  eventId: string;
  body: string;
  /** 1 for the first POST of this event to this endpoint. */
  attempt: number;
  /** The trace the POST continues (the event's intake span); null when untraced. */
  traceparent: string | null;
}

export async function tracedPost(
  client: WebhookClient,
  webhook: OutgoingWebhook,
  headers: Record<string, string>,
): Promise<PostResult> {
  const span = startSpan(SERVICE_NAMES.webhookDispatcher, "webhook POST", {
    kind: SpanKind.INTERNAL,
    parent: contextFromTraceparent(webhook.traceparent),
    attributes: {
      "http.request.method": "POST",
      "webhook.event_id": webhook.eventId,
      "webhook.endpoint_id": webhook.endpointId,
      "webhook.attempt": webhook.attempt,
    },
  });
  if (!span) return client.post(webhook.url, headers, webhook.body);
  const result = await withActiveSpan(span, () => client.post(webhook.url, headers, webhook.body));
  if (result.statusCode !== null) span.setAttribute("http.response.status_code", result.statusCode);
  if (result.error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
  span.end();
  return result;
}
