/** The test-environment courier simulator (migration 0001_baseline). */
import type { ColumnType } from "kysely";

export interface CourierSimulatorsTable {
  account_id: number;
  enabled: boolean;
  step_ms: number;
  enabled_at: ColumnType<Date, Date | string | undefined>;
}

export interface SimulatedDeliveriesTable {
  delivery_id: number;
  account_id: number;
  round_id: number | null;
  step: ColumnType<number, number | undefined>;
  next_at: ColumnType<Date, Date | string>;
  done: ColumnType<boolean, boolean | undefined>;
}
