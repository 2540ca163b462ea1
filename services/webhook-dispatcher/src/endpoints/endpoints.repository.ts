/** Queries of the endpoint registry; every lookup is scoped to the caller's account. */
import type { Insertable, Selectable } from "kysely";
import { sql } from "kysely";
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
    .selectFrom("attempts as a")
    .innerJoin("messages as m", "m.id", "a.message_id")
    .innerJoin("events as ev", "ev.id", "m.event_id")
    .select([
      "a.id",
      "m.event_id",
      "ev.type as event_type",
      "m.delivery_id",
      "m.sequence",
      "a.attempt",
      "a.attempted_at",
      "a.status_code",
      "a.duration_ms",
      "a.error",
      "a.outcome",
      "a.next_attempt_at",
    ])
    .where("a.endpoint_id", "=", endpointId)
    .orderBy("a.id", "desc")
    .limit(limit)
    .execute();
}

/** The deliveries that have events of the account since `since` matching the endpoint's filter. */
export async function replayableDeliveries(db: Db, endpoint: EndpointRow, since: Date): Promise<number[]> {
  const rows = await db
    .selectFrom("events")
    .select("delivery_id")
    .distinct()
    .where("account_id", "=", endpoint.account_id)
    .where("occurred_at", ">=", since)
    .where((eb) => (endpoint.event_types ? eb("type", "in", endpoint.event_types) : eb.val(true)))
    .orderBy("delivery_id")
    .execute();
  return rows.map((row) => Number(row.delivery_id));
}

/**
 * Queues every matching event since `since` again: a message already delivered or dead-lettered
 * becomes pending with a fresh retry count; one still pending is left as it is.
 */
export async function requeueEventsSince(db: Db, endpoint: EndpointRow, since: Date): Promise<number> {
  const filter = endpoint.event_types ? sql`and type = any(${endpoint.event_types}::text[])` : sql``;
  const { rows } = await sql<{ count: number }>`
    with ev as (
      select id, delivery_id, sequence from events
      where account_id = ${endpoint.account_id} and occurred_at >= ${since} ${filter}
    ), upserted as (
      insert into messages (endpoint_id, event_id, delivery_id, sequence)
      select ${endpoint.id}::uuid, id, delivery_id, sequence from ev
      on conflict (endpoint_id, event_id) do update
        set state = 'pending', attempts = 0, next_attempt_at = null, lease_until = null, lease_token = null,
            dead_reason = null, finished_at = null, not_before = now()
        where messages.state <> 'pending'
      returning 1
    )
    select count(*)::int as count from ev
  `.execute(db);
  return rows[0]?.count ?? 0;
}
