/**
 * Retention: events, finished messages and attempts older than WEBHOOKS_RETENTION_DAYS are
 * deleted in small batches, so replay reaches that far back and the tables stay bounded.
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
      select m.id from messages m
      where m.state <> 'pending' and m.finished_at < ${cutoff}
        and not exists (select 1 from attempts a where a.message_id = m.id)
      limit ${BATCH})
  `.execute(db);
  const events = await sql`
    delete from events where id in (
      select e.id from events e
      where e.received_at < ${cutoff} and not exists (select 1 from messages m where m.event_id = e.id)
      limit ${BATCH})
  `.execute(db);
  return [attempts, messages, events].reduce((sum, r) => sum + Number(r.numAffectedRows ?? 0), 0);
}
