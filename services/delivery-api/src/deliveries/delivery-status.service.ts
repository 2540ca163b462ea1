/**
 * Status changes made by dispatch (the operator API): each one is checked against the state
 * machine and announced by a `delivery.status_changed` event in the same transaction.
 */
import type { Delivery, DeliveryStatus } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import { deliveryNotFound } from "./deliveries.errors.ts";
import { findDelivery, updateDeliveryRow, updateTask } from "./deliveries.repository.ts";
import { canTransition, OPERATOR_TRANSITIONS } from "./delivery-status.ts";
import { type DeliveriesDeps, recordEvent } from "./delivery-writes.ts";

export interface StatusChange {
  status: DeliveryStatus;
  /** Why the delivery failed, as the messenger chose it (only with `failed`). */
  failure_reason?: string | null;
}

export function createDeliveryStatusService(deps: DeliveriesDeps) {
  return {
    async changeStatus(id: number, change: StatusChange): Promise<Delivery> {
      return deps.db.transaction().execute(async (trx) => {
        const owner = await trx.selectFrom("deliveries").select("account_id").where("id", "=", id).executeTakeFirst();
        const stored = owner && (await findDelivery(trx, owner.account_id, id, { forUpdate: true }));
        if (!owner || !stored) throw deliveryNotFound(id);
        const from = stored.delivery.status;
        if (!canTransition(from, change.status)) {
          const allowed = OPERATOR_TRANSITIONS[from];
          throw unprocessable(
            `status cannot change from ${from} to ${change.status}` +
              (allowed.length > 0 ? `; allowed: ${allowed.join(", ")}` : `; ${from} is final`),
          );
        }
        stored.delivery = await updateDeliveryRow(trx, id, { status: change.status });
        if (change.status === "delivered" || change.status === "failed") {
          // The task that completes the delivery: the dropoff, or the pickup when it never happened.
          const kind = change.status === "failed" && from !== "picked_up" ? "pickup" : "dropoff";
          const task = await updateTask(trx, id, kind, {
            completed_at: new Date(),
            failure_reason: change.status === "failed" ? (change.failure_reason ?? null) : null,
          });
          stored.tasks = stored.tasks.map((t) => (t.kind === kind ? task : t));
        }
        return recordEvent(deps, trx, owner.account_id, stored, "delivery.status_changed", from);
      });
    },
  };
}
