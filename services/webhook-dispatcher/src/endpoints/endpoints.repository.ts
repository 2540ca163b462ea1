/** Queries of the endpoint registry; every lookup is scoped to the caller's account. */
import type { Insertable, Selectable } from "kysely";
import type { Db } from "../db/database.ts";
import type { AttemptOutcome } from "../queue/queue.table.ts";
import type { EndpointsTable } from "./endpoints.table.ts";

export type EndpointRow = Selectable<EndpointsTable>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function insertEndpoint(db: Db, values: Insertable<EndpointsTable>): Promise<EndpointRow> {
  return db.insertInto("endpoints").values(values).returningAll().executeTakeFirstOrThrow();
}

export async function countEndpoints(db: Db, accountId: number): Promise<number> {
  const row = await db
    .selectFrom("endpoints")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("account_id", "=", accountId)
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function listEndpoints(db: Db, accountId: number): Promise<EndpointRow[]> {
  return db
    .selectFrom("endpoints")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("deleted_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** The account's endpoint, locked when `forUpdate`; undefined for an unknown id or another account's. */
export async function findEndpoint(
  db: Db,
  accountId: number,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EndpointRow | undefined> {
  if (!UUID.test(id)) return undefined;
  let query = db
    .selectFrom("endpoints")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .where("deleted_at", "is", null);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateEndpoint(db: Db, id: string, values: Partial<Insertable<EndpointsTable>>) {
  return db.updateTable("endpoints").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

/** Enables the endpoint and forgets why and since when it failed; answers the row as it is now. */
export async function enableEndpoint(db: Db, id: string): Promise<EndpointRow> {
  return updateEndpoint(db, id, { status: "enabled", disabled_reason: null, disabled_at: null, failing_since: null });
}

export interface AttemptView {
  id: number;
  event_id: string;
  event_type: string;
  delivery_id: number;
  sequence: number;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  outcome: AttemptOutcome;
  next_attempt_at: Date | null;
}

/** The endpoint's most recent attempts, newest first. */
export async function listAttempts(db: Db, endpointId: string, limit: number): Promise<AttemptView[]> {
  return db
    .selectFrom("attempts")
    .select([
      "id",
      "event_id",
      "event_type",
      "delivery_id",
      "sequence",
      "attempt",
      "attempted_at",
      "status_code",
      "duration_ms",
      "error",
      "outcome",
      "next_attempt_at",
    ])
    .where("endpoint_id", "=", endpointId)
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}
