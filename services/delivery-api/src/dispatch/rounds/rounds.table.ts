/** Rounds, their ordered tasks and the proof images of those tasks (migration 0001_baseline). */
import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "../../db/columns.ts";

export type RoundStatus = "planned" | "active" | "ended";

export interface RoundsTable {
  id: Generated<number>;
  messenger_id: number;
  vehicle_id: number | null;
  status: ColumnType<RoundStatus, RoundStatus | undefined>;
  simulated: ColumnType<boolean, boolean | undefined>;
  started_at: Date | null;
  ended_at: Date | null;
  created_at: CreatedAt;
}

export interface RoundTasksTable {
  round_id: number;
  task_id: number;
  position: number;
  eta_computed_at: Date | null;
}

export type MediaKind = "signature" | "picture";

export interface TaskMediaTable {
  id: string;
  task_id: number;
  kind: MediaKind;
  content_type: "image/jpeg" | "image/png";
  bytes: Buffer;
  created_at: CreatedAt;
}
