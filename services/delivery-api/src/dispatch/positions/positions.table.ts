/** Positions of rounds (migration 0001_baseline). */
import type { ColumnType } from "kysely";

export type PositionSource = "tracker" | "phone";

export interface RoundPositionsTable {
  round_id: number;
  source: PositionSource;
  latitude: number;
  longitude: number;
  recorded_at: ColumnType<Date, Date | string>;
  received_at: ColumnType<Date, Date | string | undefined>;
}
