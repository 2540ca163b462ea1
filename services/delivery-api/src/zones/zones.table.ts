import type { Generated } from "kysely";

export interface DeliveryZonesTable {
  id: Generated<number>;
  account_id: number;
  postal_code: string;
  latitude: number;
  longitude: number;
}
