/**
 * A delivery as the rules build it before it is stored: what create, update and redelivery
 * compute from a body, the account's catalogue and the delivery they start from.
 */
import type { Direction } from "@dos/contracts";
import type { Selectable } from "kysely";
import type { DeliveriesTable, DeliveryPackagesTable, TaskKind, TasksTable } from "./deliveries.table.ts";

export interface PlaceData {
  recipient_name: string;
  recipient_phone: string | null;
  recipient_email: string | null;
  company_name: string | null;
  address: string;
  postal_code: string;
  city: string;
  address_instructions: string | null;
  latitude: number | null;
  longitude: number | null;
}

export interface TaskDraft {
  kind: TaskKind;
  at_default_place: boolean;
  saved_address_id: number | null;
  slot_starting_at: Date;
  slot_ending_at: Date;
  place: PlaceData;
}

export interface PackageDraft {
  package_type_id: number | null;
  type: string;
  name: string;
  amount: number;
  volume_dm3: number;
  weight_kg: number;
  fragility: string | null;
  temperature: string | null;
  client_reference: string | null;
}

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
      place: {
        recipient_name: row.recipient_name,
        recipient_phone: row.recipient_phone,
        recipient_email: row.recipient_email,
        company_name: row.company_name,
        address: row.address,
        postal_code: row.postal_code,
        city: row.city,
        address_instructions: row.address_instructions,
        latitude: row.latitude,
        longitude: row.longitude,
      },
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
    packages: [...stored.packages]
      .sort((a, b) => a.position - b.position)
      .map((p) => ({
        package_type_id: p.package_type_id,
        type: p.type,
        name: p.name,
        amount: p.amount,
        volume_dm3: p.volume_dm3,
        weight_kg: p.weight_kg,
        fragility: p.fragility,
        temperature: p.temperature,
        client_reference: p.client_reference,
      })),
  };
}

/** The tasks whose slot the client chose: every task not at the default place. */
export function clientTasks(draft: DeliveryDraft): TaskDraft[] {
  return [draft.pickup, draft.dropoff].filter((t) => !t.at_default_place);
}
