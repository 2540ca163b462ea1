/** The deliveries feature as dispatch reaches it (see dispatch/deliveries.port.ts). */
import type { DeliveriesPort, LockedDelivery } from "../dispatch/deliveries.port.ts";
import { updateTask } from "./deliveries.repository.ts";
import { applyStatusChange, lockDeliveryById } from "./delivery-status.service.ts";
import { type DeliveriesDeps, recordEvent } from "./delivery-writes.ts";

export function deliveriesPortFor(deps: DeliveriesDeps): DeliveriesPort {
  return {
    async lock(trx, deliveryId): Promise<LockedDelivery> {
      const stored = await lockDeliveryById(trx, deliveryId);
      return {
        id: deliveryId,
        get accountId() {
          return stored.delivery.account_id;
        },
        get status() {
          return stored.delivery.status;
        },
        get senderDisplayName() {
          return stored.delivery.sender_display_name;
        },
        get tasks() {
          return stored.tasks;
        },
        changeStatus: (change) => applyStatusChange(deps, trx, stored, change),
        async startTask(taskId) {
          const task = stored.tasks.find((t) => t.id === taskId);
          if (!task) throw new Error(`task ${taskId} is not a task of delivery ${deliveryId}`);
          const started = await updateTask(trx, deliveryId, task.kind, { started_at: new Date() });
          stored.tasks = stored.tasks.map((t) => (t.id === taskId ? started : t));
          return recordEvent(deps, trx, stored.delivery.account_id, stored, "delivery.updated");
        },
      };
    },
  };
}
