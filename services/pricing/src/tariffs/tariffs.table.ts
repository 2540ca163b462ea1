import type { TariffRules } from "@dos/contracts";
import type { ColumnType, Generated, JSONColumnType } from "kysely";

type Json<T extends object> = JSONColumnType<T, string, string>;

export interface TariffsTable {
  id: Generated<number>;
  account_id: number;
  effective_from: ColumnType<Date, Date, never>;
  base_outbound_cents: number;
  base_inbound_cents: number;
  base_other_cents: number;
  per_package_cents: number;
  weight_bands: Json<TariffRules["weight_bands"]>;
  volume_bands: Json<TariffRules["volume_bands"]>;
  slot_surcharges: Json<TariffRules["slot_surcharges"]>;
  lead_time_surcharges: Json<TariffRules["lead_time_surcharges"]>;
  minimum_cents: number;
  note: string | null;
  created_at: ColumnType<Date, never, never>;
}
