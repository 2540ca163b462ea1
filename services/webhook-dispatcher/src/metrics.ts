/**
 * webhook-dispatcher's own metrics: attempts by outcome and their duration, dead letters,
 * disabled endpoints, events taken in, and gauges measured every few seconds (queue depth,
 * oldest pending message, consumer lag).
 */
import type { AppMetrics } from "@dos/service-kit";

export function createDispatcherMetrics(metrics: AppMetrics) {
  const attempts = metrics.counter("webhook_attempts_total", "Webhook POST attempts by outcome.", ["outcome"]);
  const attemptDuration = metrics.histogram(
    "webhook_attempt_duration_seconds",
    "Duration of webhook POST attempts.",
    ["outcome"],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  return {
    observeAttempt(outcome: string, durationMs: number) {
      attempts.inc({ outcome });
      attemptDuration.observe({ outcome }, durationMs / 1000);
    },
    deadLetters: metrics.counter(
      "webhook_dead_letters_total",
      "Messages dead-lettered: attempts exhausted, or their endpoint disabled.",
      ["reason"],
    ),
    endpointsDisabled: metrics.counter(
      "webhook_endpoints_disabled_total",
      "Endpoints disabled (410 or sustained failure).",
    ),
    eventsReceived: metrics.counter("webhook_events_received_total", "Delivery events taken from the stream.", [
      "result",
    ]),
    queueDepth: metrics.gauge("webhook_queue_depth", "Pending webhook messages, over all endpoints."),
    oldestPendingAge: metrics.gauge("webhook_oldest_pending_age_seconds", "Age of the oldest pending webhook message."),
    consumerPending: metrics.gauge(
      "webhook_consumer_pending_messages",
      "Delivery events in the stream not yet taken in by the dispatcher's consumer.",
    ),
    consumerAckPending: metrics.gauge(
      "webhook_consumer_ack_pending_messages",
      "Delivery events handed to the dispatcher and not yet acknowledged.",
    ),
  };
}
export type DispatcherMetrics = ReturnType<typeof createDispatcherMetrics>;
