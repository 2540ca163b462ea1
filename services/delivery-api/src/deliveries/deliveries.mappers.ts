/** Between the stored rows, the drafts the rules build, and the v2 representations of the spec. */
import { type Delivery, type DeliveryListItem, formatTimestamp, type Package, type Task } from "@dos/contracts";
import type { Selectable } from "kysely";
import { placeColumnsOf, placeOutput } from "../places/place-columns.ts";
import type { DeliveriesTable, DeliveryPackagesTable, TaskKind, TasksTable } from "./deliveries.table.ts";
import type { DeliveryDraft, PackageDraft, StoredDelivery, TaskDraft } from "./delivery-draft.ts";

const timestampOrNull = (date: Date | null) => (date ? formatTimestamp(date) : null);

type ShownDeliveryRow = Pick<
  Selectable<DeliveriesTable>,
  | "id"
  | "created_at"
  | "status"
  | "comments"
  | "client_order_reference"
  | "price_cents"
  | "direction"
  | "bring_back_containers"
  | "original_delivery_id"
  | "redelivery_id"
>;
export type ShownTaskRow = Pick<
  Selectable<TasksTable>,
  | "kind"
  | "slot_starting_at"
  | "slot_ending_at"
  | "recipient_name"
  | "recipient_phone"
  | "recipient_email"
  | "company_name"
  | "address"
  | "postal_code"
  | "city"
  | "address_instructions"
  | "started_at"
  | "tracking_token"
  | "eta"
  | "completed_at"
  | "failure_reason"
  | "notes"
  | "signature_url"
  | "accepted_by"
  | "completion_pictures"
  | "completion_text"
>;
type ShownPackageRow = Omit<Selectable<DeliveryPackagesTable>, "id" | "delivery_id" | "position">;

/** The rows a v2 Delivery is made of: as stored, or as about to be written. */
export interface ShownRows {
  delivery: ShownDeliveryRow;
  tasks: ShownTaskRow[];
  packages: ShownPackageRow[];
}

/** The v2 Delivery of a stored delivery. `trackingBaseUrl` prefixes the public tracking links. */
export function presentDelivery(stored: ShownRows, trackingBaseUrl: string): Delivery {
  const { delivery } = stored;
  const task = (kind: string) => {
    const row = stored.tasks.find((t) => t.kind === kind);
    return row ? presentTask(row, trackingBaseUrl) : null;
  };
  return {
    id: delivery.id,
    created_at: formatTimestamp(delivery.created_at),
    status: delivery.status,
    comments: delivery.comments,
    client_order_reference: delivery.client_order_reference,
    price_cents: delivery.price_cents,
    direction: delivery.direction,
    bring_back_containers: delivery.bring_back_containers,
    original_delivery_id: delivery.original_delivery_id,
    redelivery_id: delivery.redelivery_id,
    dropoff: task("dropoff"),
    pickup: task("pickup"),
    packages: stored.packages.map(packageOutput),
    reversed_packages: [],
  };
}

/** A v2 Package of a stored (or about to be stored) package row. */
function packageOutput(p: ShownPackageRow): Package {
  return {
    package_type_id: p.package_type_id,
    type: p.type,
    name: p.name,
    amount: p.amount,
    volume_dm3: p.volume_dm3,
    weight_kg: p.weight_kg,
    fragility: p.fragility,
    temperature: p.temperature,
    client_reference: p.client_reference,
  };
}

function presentTask(row: ShownTaskRow, trackingBaseUrl: string): Task {
  return {
    slot_starting_at: formatTimestamp(row.slot_starting_at),
    slot_ending_at: formatTimestamp(row.slot_ending_at),
    place: placeOutput(row),
    // The link is sent when the messenger starts the task; before that there is nothing to follow.
    tracking_url: row.started_at && row.tracking_token ? `${trackingBaseUrl}/${row.tracking_token}` : null,
    eta: timestampOrNull(row.eta),
    completed_at: timestampOrNull(row.completed_at),
    failure_reason: row.failure_reason,
    notes: row.notes,
    completion_signature:
      row.signature_url && row.accepted_by ? { url: row.signature_url, accepted_by: row.accepted_by } : null,
    completion_pictures: row.completion_pictures,
    completion_text: row.completion_text,
  };
}

export interface ListRow {
  id: number;
  created_at: Date;
  status: DeliveryListItem["status"];
  price_cents: number | null;
  slot_starting_at: Date;
  slot_ending_at: Date;
}

export function presentListItem(row: ListRow): DeliveryListItem {
  return {
    id: row.id,
    created_at: formatTimestamp(row.created_at),
    status: row.status,
    slot_starting_at: formatTimestamp(row.slot_starting_at),
    slot_ending_at: formatTimestamp(row.slot_ending_at),
    price_cents: row.price_cents,
  };
}

/** The columns a task draft sets (the messenger's progress columns are left alone). */
export function taskValues(task: TaskDraft) {
  return {
    kind: task.kind,
    at_default_place: task.at_default_place,
    saved_address_id: task.saved_address_id,
    slot_starting_at: task.slot_starting_at,
    slot_ending_at: task.slot_ending_at,
    ...task.place,
  };
}

export function packageValues(packages: PackageDraft[]) {
  return packages.map((p) => ({ ...p }));
}

/** The delivery columns a draft sets. */
export function deliveryValues(draft: DeliveryDraft) {
  return {
    direction: draft.direction,
    sender_display_name: draft.sender_display_name,
    comments: draft.comments,
    client_order_reference: draft.client_order_reference,
    bring_back_containers: draft.bring_back_containers,
  };
}

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
