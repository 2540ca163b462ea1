/**
 * The audit log: who changed what through the operator API, when, with what answer, and the
 * resource before and after. Entries are written by the audit hooks (audit.hooks.ts) and read,
 * newest first, by GET /ops/v1/audit.
 */
import { formatTimestamp } from "@dos/contracts";
import type { Kysely, Selectable } from "kysely";
import type { DB } from "../db/database.ts";
import { completeAuditEntry, insertAuditEntry, listAuditEntries, listAuditPeople } from "./audit.repository.ts";
import {
  AUDIT_PEOPLE_MAX,
  type AuditEntry,
  type AuditPage,
  type AuditPeople,
  type AuditQuery,
} from "./audit.schemas.ts";
import type { AuditLogTable } from "./audit.table.ts";

export interface AuditActor {
  kind: "automation" | "staff";
  id: number | null;
  name: string;
}

/** What is known of a request when its entry is opened. */
export interface AuditOpening {
  actor: AuditActor;
  method: string;
  route: string;
  resourceType: string;
  resourceId: string | null;
  requestId: string;
  /** JSON text (audit-values.ts), or null. */
  before: string | null;
}

/** What its answer adds. */
export interface AuditOutcome {
  statusCode: number;
  resourceId: string | null;
  after: string | null;
}

function entryView(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: row.id,
    at: formatTimestamp(row.at),
    actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_name },
    method: row.method,
    route: row.route,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    status_code: row.status_code,
    before: row.before ?? null,
    after: row.after ?? null,
    request_id: row.request_id,
  };
}

const columnsOf = (opening: AuditOpening) => ({
  actor_kind: opening.actor.kind,
  actor_id: opening.actor.id,
  actor_name: opening.actor.name,
  method: opening.method,
  route: opening.route,
  resource_type: opening.resourceType,
  resource_id: opening.resourceId,
  request_id: opening.requestId,
  before: opening.before,
});

export function createAuditService(db: Kysely<DB>) {
  return {
    /** Opens the entry of a request about to run (its outcome not known yet); its id. */
    async open(opening: AuditOpening): Promise<number> {
      return (await insertAuditEntry(db, columnsOf(opening))).id;
    },

    /** Completes an opened entry with the answer. */
    async close(id: number, outcome: AuditOutcome): Promise<void> {
      await completeAuditEntry(db, id, {
        status_code: outcome.statusCode,
        resource_id: outcome.resourceId,
        after: outcome.after,
      });
    },

    /** One entry for a request refused before it ran (403, 422…). */
    async record(opening: AuditOpening, outcome: AuditOutcome): Promise<void> {
      await insertAuditEntry(db, {
        ...columnsOf(opening),
        status_code: outcome.statusCode,
        resource_id: outcome.resourceId,
        after: outcome.after,
      });
    },

    /** A page of entries, newest first; next_before_id continues with older ones. */
    async list(query: AuditQuery): Promise<AuditPage> {
      const rows = await listAuditEntries(db, {
        actorKind: query.actor_kind,
        actorId: query.actor_id,
        resourceType: query.resource_type,
        resourceId: query.resource_id,
        beforeId: query.before_id,
        limit: query.limit + 1,
      });
      const entries = rows.slice(0, query.limit).map(entryView);
      return { entries, next_before_id: rows.length > query.limit ? (entries.at(-1)?.id ?? null) : null };
    },

    /** Who an audit filter can name (the staff by name); truncated past AUDIT_PEOPLE_MAX. */
    async people(): Promise<AuditPeople> {
      const rows = await listAuditPeople(db, AUDIT_PEOPLE_MAX + 1);
      return { people: rows.slice(0, AUDIT_PEOPLE_MAX), truncated: rows.length > AUDIT_PEOPLE_MAX };
    },
  };
}
export type AuditService = ReturnType<typeof createAuditService>;
