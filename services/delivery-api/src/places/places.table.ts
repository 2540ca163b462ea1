import type { ColumnType, Generated } from "kysely";

export interface PlacesTable {
  id: Generated<number>;
  account_id: number;
  kind: "default" | "saved";
  label: string | null;
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
  created_at: ColumnType<Date, Date | string | undefined, never>;
}
