import type { DeliveryStatus, Direction, QuoteLine } from "@dos/contracts";
import type { ColumnType, Generated, JSONColumnType } from "kysely";
import type { CreatedAt } from "../db/columns.ts";
import type { PlaceColumns } from "../places/places.table.ts";

export interface DeliveriesTable {
  id: Generated<number>;
  account_id: number;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined>;
  direction: Direction;
  comments: string | null;
  client_order_reference: string | null;
  sender_display_name: string | null;
  bring_back_containers: boolean;
  price_cents: number | null;
  price_tariff_id: number | null;
  price_lines: JSONColumnType<QuoteLine[], string | undefined, string>;
  original_delivery_id: number | null;
  redelivery_id: number | null;
  event_sequence: ColumnType<number, number | undefined>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined>;
}

export type TaskKind = "pickup" | "dropoff";

export interface TasksTable extends PlaceColumns {
  id: Generated<number>;
  delivery_id: number;
  kind: TaskKind;
  at_default_place: ColumnType<boolean, boolean | undefined>;
  saved_address_id: number | null;
  slot_starting_at: ColumnType<Date, Date | string>;
  slot_ending_at: ColumnType<Date, Date | string>;
  tracking_token: string | null;
  eta: Date | null;
  started_at: Date | null;
  completed_at: Date | null;
  failure_reason: string | null;
  notes: string | null;
  signature_url: string | null;
  accepted_by: string | null;
  completion_pictures: ColumnType<string[], string[] | undefined>;
  completion_text: string | null;
}

export interface DeliveryPackagesTable {
  id: Generated<number>;
  delivery_id: number;
  position: number;
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
