/**
 * What dispatch needs of the deliveries feature, and nothing more: lock a delivery inside
 * dispatch's own transaction, look at its status and tasks, start a task, change its status. The
 * deliveries feature implements it (deliveries/dispatch.adapter.ts); the state machine, the
 * delivery's columns and its outbox events stay the deliveries feature's.
 */
import type { Delivery, DeliveryStatus } from "@dos/contracts";
import type { Db } from "../db/database.ts";

export type TaskKind = "pickup" | "dropoff";

/** A task of a locked delivery, as dispatch decides on it. */
export interface DeliveryTaskState {
  readonly id: number;
  readonly kind: TaskKind;
  readonly started_at: Date | null;
  readonly completed_at: Date | null;
  readonly recipient_phone: string | null;
  /** The task at the account's own default place: the client's own, not a recipient's. */
  readonly at_default_place: boolean;
}

export interface DeliveryStatusChange {
  status: DeliveryStatus;
  /** Why the delivery failed, as the messenger chose it (only with `failed`). */
  failure_reason?: string | null;
  /** The messenger's completion data of the task this change completes. */
  completion?: {
    notes?: string | null;
    accepted_by?: string | null;
    signature_url?: string | null;
    pictures?: string[];
    completion_text?: string | null;
  };
  /** The task this change completes, when the messenger named it. */
  task?: TaskKind;
}

/** A delivery locked until the transaction it was locked in ends; its fields follow its changes. */
export interface LockedDelivery {
  readonly id: number;
  readonly accountId: number;
  readonly status: DeliveryStatus;
  readonly senderDisplayName: string | null;
  readonly tasks: readonly DeliveryTaskState[];
  /** Checked against the state machine and announced (`delivery.status_changed`). */
  changeStatus(change: DeliveryStatusChange): Promise<Delivery>;
  /** Marks the task started and announces it (`delivery.updated`: its tracking_url appears). */
  startTask(taskId: number): Promise<Delivery>;
}

export interface DeliveriesPort {
  /** The delivery of any account, locked in `trx`; 404 when unknown. */
  lock(trx: Db, deliveryId: number): Promise<LockedDelivery>;
}
