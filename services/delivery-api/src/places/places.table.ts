import type { Generated } from "kysely";
import type { CreatedAt } from "../db/columns.ts";

/** The columns of an address and its recipient; a task keeps its own copy of them. */
export interface PlaceColumns {
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

export interface PlacesTable extends PlaceColumns {
  id: Generated<number>;
  account_id: number;
  kind: "default" | "saved";
  label: string | null;
  created_at: CreatedAt;
}
