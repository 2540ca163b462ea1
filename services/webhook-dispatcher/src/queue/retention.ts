/**
 * Retention: attempts, finished queue messages and events older than WEBHOOKS_RETENTION_DAYS are
 * deleted in small batches, so the tables stay bounded. (Replays read DELIVERY_EVENTS, which
 * keeps its own 30 days.)
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";

const BATCH = 5000;

/** Deletes one batch of each kind of expired row; returns how many rows went. */
export async function pruneExpired(db: Db, retentionDays: number): Promise<number> {
  const cutoff = new Date(Date.now() - retentionDays * 24 * 60 * 60 * 1000);
  const attempts = await sql`
    delete from attempts where id in (select id from attempts where attempted_at < ${cutoff} limit ${BATCH})
  `.execute(db);
  const messages = await sql`
    delete from messages where id in (
      select id from messages where state <> 'pending' and finished_at < ${cutoff} limit ${BATCH})
  `.execute(db);
  const events = await sql`
    delete from events where id in (
      select e.id from events e
      where e.received_at < ${cutoff} and not exists (select 1 from messages m where m.event_id = e.id)
      limit ${BATCH})
  `.execute(db);
  return [attempts, messages, events].reduce((sum, r) => sum + Number(r.numAffectedRows ?? 0), 0);
}
