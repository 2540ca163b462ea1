/**
 * A delivery as the rules build it before it is stored: what create, update and redelivery
 * compute from a body, the account's catalogue and the delivery they start from.
 */
import type { Direction, Package } from "@dos/contracts";
import type { Selectable } from "kysely";
import { placeColumnsOf } from "../places/place-columns.ts";
import type { PlaceColumns } from "../places/places.table.ts";
import { packageOutput } from "./deliveries.mappers.ts";
import type { DeliveriesTable, DeliveryPackagesTable, TaskKind, TasksTable } from "./deliveries.table.ts";

/** A place as a task holds it: the v2 fields and the coordinates the ETA uses. */
export type PlaceData = PlaceColumns;

export interface TaskDraft {
  kind: TaskKind;
  at_default_place: boolean;
  saved_address_id: number | null;
  slot_starting_at: Date;
  slot_ending_at: Date;
  place: PlaceData;
}

/** A package as it is stored and shown. */
export type PackageDraft = Package;

export interface DeliveryDraft {
  direction: Direction;
  sender_display_name: string | null;
  comments: string | null;
  client_order_reference: string | null;
  bring_back_containers: boolean;
  pickup: TaskDraft;
  dropoff: TaskDraft;
  packages: PackageDraft[];
}

/** A stored delivery with its two tasks and its packages, as the repository reads it. */
export interface StoredDelivery {
  delivery: Selectable<DeliveriesTable>;
  tasks: Selectable<TasksTable>[];
  packages: Selectable<DeliveryPackagesTable>[];
}

/** The type name of a package given inline rather than from the catalogue. */
export const CUSTOM_PACKAGE_TYPE = "custom";

/** The draft a stored delivery corresponds to: the starting point of update and redelivery. */
export function draftFromStored(stored: StoredDelivery): DeliveryDraft {
  const { delivery } = stored;
  const task = (kind: TaskKind): TaskDraft => {
    const row = stored.tasks.find((t) => t.kind === kind);
    if (!row) throw new Error(`delivery ${delivery.id} has no ${kind} task`);
    return {
      kind,
      at_default_place: row.at_default_place,
      saved_address_id: row.saved_address_id,
      slot_starting_at: row.slot_starting_at,
      slot_ending_at: row.slot_ending_at,
      place: placeColumnsOf(row),
    };
  };
  return {
    direction: delivery.direction,
    sender_display_name: delivery.sender_display_name,
    comments: delivery.comments,
    client_order_reference: delivery.client_order_reference,
    bring_back_containers: delivery.bring_back_containers,
    pickup: task("pickup"),
    dropoff: task("dropoff"),
    packages: [...stored.packages].sort((a, b) => a.position - b.position).map(packageOutput),
  };
}

/** The tasks whose slot the client chose: every task not at the default place. */
export function clientTasks(draft: DeliveryDraft): TaskDraft[] {
  return [draft.pickup, draft.dropoff].filter((t) => !t.at_default_place);
}
