/**
 * The delivery state machine. The spec shows only cancel and redelivery; the rest is decided in
 * docs/spec-decisions.md: a delivery can be changed or cancelled until the goods are picked up.
 */
import type { DeliveryStatus } from "@dos/contracts";

/** States in which the client may update a delivery (PATCH/PUT). */
export const UPDATABLE_STATUSES: ReadonlySet<DeliveryStatus> = new Set(["saved", "scheduled"]);

/** States from which the client may cancel. */
export const CANCELLABLE_STATUSES: ReadonlySet<DeliveryStatus> = new Set(["saved", "scheduled"]);

/** The only state a redelivery may start from (spec). */
export const REDELIVERABLE_STATUS: DeliveryStatus = "failed";

/** The operator's transitions (dispatch progress); cancelled is reached only by the cancel operation. */
export const OPERATOR_TRANSITIONS: Readonly<Record<DeliveryStatus, readonly DeliveryStatus[]>> = {
  saved: ["scheduled", "failed"],
  scheduled: ["saved", "picked_up", "delivered", "failed"],
  picked_up: ["delivered", "failed"],
  delivered: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: DeliveryStatus, to: DeliveryStatus): boolean {
  return OPERATOR_TRANSITIONS[from].includes(to);
}
