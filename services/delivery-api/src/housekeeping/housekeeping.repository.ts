/**
 * What housekeeping deletes, a batch per table and call: outbox events and fleet changes
 * published longer ago than the retention (an unpublished one stays, however old: it has yet to
 * go out), idempotency records past their 24 hours, and audit entries past theirs.
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import { IDEMPOTENCY_RETENTION } from "../idempotency/idempotency.repository.ts";

export const PRUNE_BATCH = 5000;

/** The tables housekeeping deletes from, under the names its counts use. */
export const PRUNED_TABLES = {
  outbox: "outbox",
  fleetOutbox: "fleet_outbox",
  idempotencyKeys: "idempotency_keys",
  auditLog: "audit_log",
};

/** Rows deleted from each table. */
export type Pruned = Record<keyof typeof PRUNED_TABLES, number>;

/** Deletes up to `batch` expired rows of each table; returns how many went from each. */
export async function pruneExpired(
  db: Db,
  retention: { outboxRetentionMs: number; auditRetentionMs: number },
  batch = PRUNE_BATCH,
): Promise<Pruned> {
  const cutoff = new Date(Date.now() - retention.outboxRetentionMs);
  const outbox = await deletePublished(db, "outbox", "occurred_at", cutoff, batch);
  const fleetOutbox = await deletePublished(db, "fleet_outbox", "created_at", cutoff, batch);
  const idempotencyKeys = await sql`
    delete from idempotency_keys where (account_id, operation, key) in (
      select account_id, operation, key from idempotency_keys
      where created_at <= now() - ${IDEMPOTENCY_RETENTION} limit ${batch})
  `.execute(db);
  // The BRIN index on `at` (migration 0007) keeps this from reading the recent entries.
  const auditLog = await sql`
    delete from audit_log where id in (
      select id from audit_log where at < ${new Date(Date.now() - retention.auditRetentionMs)} limit ${batch})
  `.execute(db);
  const count = (result: { numAffectedRows?: bigint }) => Number(result.numAffectedRows ?? 0);
  return {
    outbox: count(outbox),
    fleetOutbox: count(fleetOutbox),
    idempotencyKeys: count(idempotencyKeys),
    auditLog: count(auditLog),
  };
}

/**
 * Deletes up to `batch` rows of an outbox published before `cutoff`. A row is published after it
 * was appended, so the condition on its append time (`appendedAt`) changes nothing but lets the
 * BRIN index on that column skip the recent block ranges.
 */
function deletePublished(
  db: Db,
  table: "outbox" | "fleet_outbox",
  appendedAt: "occurred_at" | "created_at",
  cutoff: Date,
  batch: number,
) {
  return sql`
    delete from ${sql.table(table)} where id in (
      select id from ${sql.table(table)}
      where ${sql.ref(appendedAt)} < ${cutoff} and published_at < ${cutoff} limit ${batch})
  `.execute(db);
}
