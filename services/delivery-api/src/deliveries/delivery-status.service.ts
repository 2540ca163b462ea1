/**
 * Status changes made by dispatch (the operator API and the task lifecycle): each one is checked
 * against the state machine and announced by a `delivery.status_changed` event in the same
 * transaction. `applyStatusChange` is the one place a status changes; the task routes of
 * src/dispatch call it inside their own transactions.
 */
import type { Delivery, DeliveryStatus } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import type { Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import { deliveryNotFound } from "./deliveries.errors.ts";
import { deliveryOwner, findDelivery, updateDeliveryRow, updateTask } from "./deliveries.repository.ts";
import type { TaskKind, TasksTable } from "./deliveries.table.ts";
import type { StoredDelivery } from "./delivery-draft.ts";
import { canTransition, OPERATOR_TRANSITIONS } from "./delivery-status.ts";
import { type DeliveriesDeps, recordEvent } from "./delivery-writes.ts";

export interface StatusChange {
  status: DeliveryStatus;
  /** Why the delivery failed, as the messenger chose it (only with `failed`). */
  failure_reason?: string | null;
  /** The messenger's completion data of the task this change completes. */
  completion?: TaskCompletion;
  /** The task this change completes, when the messenger named it (else the rule below decides). */
  task?: TaskKind;
}

export interface TaskCompletion {
  notes?: string | null;
  accepted_by?: string | null;
  signature_url?: string | null;
  pictures?: string[];
  completion_text?: string | null;
}

export function createDeliveryStatusService(deps: DeliveriesDeps) {
  return {
    async changeStatus(id: number, change: StatusChange): Promise<Delivery> {
      return deps.db.transaction().execute(async (trx) => {
        const stored = await lockDeliveryById(trx, id);
        return applyStatusChange(deps, trx, stored, change);
      });
    },
  };
}

/** The delivery of any account, its row locked until the transaction ends; 404 when unknown. */
export async function lockDeliveryById(trx: Db, id: number): Promise<StoredDelivery> {
  const owner = await deliveryOwner(trx, id);
  const stored = owner !== undefined && (await findDelivery(trx, owner, id, { forUpdate: true }));
  if (!stored) throw deliveryNotFound(id);
  return stored;
}

/** The invalid-transition error: names the current state and what it allows. */
function transitionRefused(from: DeliveryStatus, to: DeliveryStatus) {
  const allowed = OPERATOR_TRANSITIONS[from];
  return unprocessable(
    `status cannot change from ${from} to ${to}` +
      (allowed.length > 0 ? `; allowed: ${allowed.join(", ")}` : `; ${from} is final`),
  );
}

/**
 * Moves a locked delivery to `change.status`, fills the completion columns of the task it
 * completes, and records `delivery.status_changed`. Completing: picked_up completes the pickup;
 * delivered the dropoff; failed the dropoff once picked up, else the pickup.
 */
export async function applyStatusChange(
  deps: DeliveriesDeps,
  trx: Db,
  stored: StoredDelivery,
  change: StatusChange,
): Promise<Delivery> {
  const id = stored.delivery.id;
  const from = stored.delivery.status;
  if (!canTransition(from, change.status)) throw transitionRefused(from, change.status);
  stored.delivery = await updateDeliveryRow(trx, id, { status: change.status });
  const kind = completedTaskKind(from, change.status) && (change.task ?? completedTaskKind(from, change.status));
  if (kind && stored.tasks.some((t) => t.kind === kind)) {
    const values: Updateable<TasksTable> = {
      completed_at: new Date(),
      failure_reason: change.status === "failed" ? (change.failure_reason ?? null) : null,
    };
    const completion = change.completion;
    if (completion) {
      values.notes = completion.notes ?? null;
      values.completion_text = completion.completion_text ?? null;
      // Proof of delivery exists only when the goods were delivered.
      if (change.status === "delivered") {
        values.accepted_by = completion.accepted_by ?? null;
        values.signature_url = completion.signature_url ?? null;
        values.completion_pictures = completion.pictures ?? [];
      }
    }
    const task = await updateTask(trx, id, kind, values);
    stored.tasks = stored.tasks.map((t) => (t.kind === kind ? task : t));
  }
  return recordEvent(deps, trx, stored.delivery.account_id, stored, "delivery.status_changed", from);
}

function completedTaskKind(from: DeliveryStatus, to: DeliveryStatus): TaskKind | null {
  if (to === "picked_up" || (to === "failed" && from !== "picked_up")) return "pickup";
  if (to === "delivered" || to === "failed") return "dropoff";
  return null;
}
