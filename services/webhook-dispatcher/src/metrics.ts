/**
 * webhook-dispatcher's own metrics: attempts by outcome and their duration, dead letters,
 * disabled endpoints, events taken in, partitions owned, and gauges measured every few seconds
 * (queue depth, oldest pending message, consumer lag of the partitions owned).
 */
import type { AppMetrics } from "@dos/service-kit";
import type { Logger } from "pino";
import type { RecordedAttempt } from "./worker/attempts.repository.ts";

export function createDispatcherMetrics(metrics: AppMetrics) {
  const attempts = metrics.counter("webhook_attempts_total", "Webhook POST attempts by outcome.", ["outcome"]);
  const attemptDuration = metrics.histogram(
    "webhook_attempt_duration_seconds",
    "Duration of webhook POST attempts.",
    ["outcome"],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  const observeAttempt = (outcome: string, durationMs: number) => {
    attempts.inc({ outcome });
    attemptDuration.observe({ outcome }, durationMs / 1000);
  };
  const deadLetters = metrics.counter(
    "webhook_dead_letters_total",
    "Messages dead-lettered: attempts exhausted, or their endpoint disabled.",
    ["reason"],
  );
  const endpointsDisabled = metrics.counter(
    "webhook_endpoints_disabled_total",
    "Endpoints disabled (410 or sustained failure).",
  );
  return {
    observeAttempt,
    /** A failed attempt as recorded: its outcome, the dead letters and the endpoint it disabled. */
    observeFailure(recorded: RecordedAttempt, durationMs: number, endpointId: string, logger: Logger) {
      observeAttempt(recorded.outcome, durationMs);
      if (recorded.outcome === "dead_lettered") deadLetters.inc({ reason: "attempts" }, 1);
      if (recorded.alsoDeadLettered > 0) deadLetters.inc({ reason: "endpoint_disabled" }, recorded.alsoDeadLettered);
      if (recorded.disabledReason) {
        endpointsDisabled.inc();
        logger.warn({ endpoint_id: endpointId, reason: recorded.disabledReason }, "webhook endpoint disabled");
      }
    },
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
    partitionsOwned: metrics.gauge(
      "webhook_partitions_owned",
      "Partitions of DELIVERY_EVENTS this replica owns (it sends their accounts' webhooks).",
    ),
  };
}
export type DispatcherMetrics = ReturnType<typeof createDispatcherMetrics>;
