/**
 * The audit log of the operator API: one row per changing request (not GET/HEAD) of an
 * authenticated actor, written before the answer goes out. A row is inserted before the handler
 * runs (status_code null) and completed after it: a row whose status stays null is a request
 * whose outcome was never recorded (the process died, or the database went away mid-request).
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table audit_log (
      id bigint generated always as identity primary key,
      at timestamptz not null default now(),
      actor_kind text not null check (actor_kind in ('automation', 'staff')),
      actor_id bigint references staff (id),
      -- The name at the time: a later rename does not rewrite history.
      actor_name text not null,
      method text not null,
      route text not null,
      resource_type text not null,
      resource_id text,
      status_code smallint,
      before jsonb,
      after jsonb,
      request_id text not null,
      constraint audit_log_actor check ((actor_kind = 'staff') = (actor_id is not null))
    );
    -- Newest first, by each filter of GET /ops/v1/audit (keyset on id).
    create index audit_log_actor_idx on audit_log (actor_kind, actor_id, id);
    create index audit_log_resource_idx on audit_log (resource_type, resource_id, id);
    create index audit_log_resource_id_idx on audit_log (resource_id, id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table audit_log`.execute(db);
}
