/** The audit log of the operator API: entries inserted, completed, and read newest first. */
import type { Insertable, Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import type { AuditLogTable } from "./audit.table.ts";

export function insertAuditEntry(db: Db, values: Insertable<AuditLogTable>) {
  return db.insertInto("audit_log").values(values).returning("id").executeTakeFirstOrThrow();
}

export function completeAuditEntry(db: Db, id: number, values: Updateable<AuditLogTable>) {
  return db.updateTable("audit_log").set(values).where("id", "=", id).execute();
}

export interface AuditFilter {
  actorKind?: "automation" | "staff" | undefined;
  actorId?: number | undefined;
  resourceType?: string | undefined;
  resourceId?: string | undefined;
  /** Only entries older than this id (the keyset of the next page). */
  beforeId?: number | undefined;
  limit: number;
}

/** Entries matching every filter given, newest first, at most `limit`. */
export function listAuditEntries(db: Db, filter: AuditFilter) {
  let query = db.selectFrom("audit_log").selectAll();
  if (filter.actorKind !== undefined) query = query.where("actor_kind", "=", filter.actorKind);
  if (filter.actorId !== undefined) query = query.where("actor_id", "=", filter.actorId);
  if (filter.resourceType !== undefined) query = query.where("resource_type", "=", filter.resourceType);
  if (filter.resourceId !== undefined) query = query.where("resource_id", "=", filter.resourceId);
  if (filter.beforeId !== undefined) query = query.where("id", "<", filter.beforeId);
  return query.orderBy("id", "desc").limit(filter.limit).execute();
}

/**
 * The people an audit filter can name: every staff person's id and name (disabled ones too: their
 * entries stay), by name, at most `limit`. Not the e-mail or role, which reading the staff needs admin for.
 */
export function listAuditPeople(db: Db, limit: number) {
  return db.selectFrom("staff").select(["id", "name", "disabled"]).orderBy("name").orderBy("id").limit(limit).execute();
}
