/**
 * How the dispatcher's group commits (the kit's batcher) meet a failure: every write of the
 * stream path, the retries and intake's routing is tried again, the pause growing, until it
 * succeeds or the dispatcher stops. A webhook must outlive a database restart, and each item's
 * promise settles with its batch, so nothing is acknowledged before it is stored.
 */
import type { FailurePolicy } from "@dos/service-kit";
import type { Logger } from "pino";

export function retryUntilStopped(logger: Logger, label: string): FailurePolicy {
  return {
    policy: "retry",
    backoff: { firstMs: 100, maxMs: 5000 },
    onRetry: (error, items) => logger.warn({ err: error, items }, `cannot handle ${label}; retrying`),
  };
}
