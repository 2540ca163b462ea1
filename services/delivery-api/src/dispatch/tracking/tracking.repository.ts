/** SQL of the tracking page: the tasks behind tracking tokens, with what their page shows. */
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { onTaskZone, taskCoordinates } from "../../zones/zones.repository.ts";

/** The tasks behind these tokens (unknown tokens have no row): one query however many tokens. */
export function findTrackedTasks(db: Db, tokens: string[]) {
  return db
    .selectFrom("tasks as t")
    .innerJoin("deliveries as d", "d.id", "t.delivery_id")
    .innerJoin("accounts as a", "a.id", "d.account_id")
    .leftJoin("delivery_zones as z", onTaskZone)
    .leftJoin("round_tasks as rt", "rt.task_id", "t.id")
    .leftJoin("rounds as r", "r.id", "rt.round_id")
    .select([
      "t.tracking_token",
      "t.kind",
      "t.started_at",
      "t.completed_at",
      "t.eta",
      "t.failure_reason",
      "t.accepted_by",
      "t.signature_url",
      "t.completion_pictures",
      "d.status",
      // A cancelled delivery is never written again: its last update is its cancellation.
      sql<Date | null>`case when d.status = 'cancelled' then d.updated_at end`.as("cancelled_at"),
      sql<string>`coalesce(d.sender_display_name, a.company_name)`.as("sender"),
      ...taskCoordinates,
      "r.id as round_id",
      "r.status as round_status",
    ])
    .where("t.tracking_token", "in", tokens)
    .execute();
}

export type TrackedTask = Awaited<ReturnType<typeof findTrackedTasks>>[number];
