/**
 * A delivery as the rules build it before it is stored: what create, update and redelivery
 * compute from a body, the account's catalogue and the delivery they start from.
 */
import type { Direction, Package } from "@dos/contracts";
import type { Selectable } from "kysely";
import type { PlaceColumns } from "../places/places.table.ts";
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

/** The tasks whose slot the client chose: every task not at the default place. */
export function clientTasks(draft: DeliveryDraft): TaskDraft[] {
  return [draft.pickup, draft.dropoff].filter((t) => !t.at_default_place);
}
