/**
 * The operator's staff: named people with a role, and their bearer tokens for the operator API
 * (a console session's, or a personal one for the CLI). A token is stored only as its SHA-256;
 * people are disabled, never deleted, so the audit log keeps pointing at them.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table staff (
      id bigint generated always as identity primary key,
      -- Stored lower-cased: one person per address, whatever case it is typed in.
      email text not null check (email = lower(email)),
      name text not null,
      role text not null check (role in ('admin', 'dispatcher', 'read_only')),
      disabled boolean not null default false,
      created_at timestamptz not null default now()
    );
    create unique index staff_email_key on staff (email);

    create table staff_tokens (
      id bigint generated always as identity primary key,
      staff_id bigint not null references staff (id),
      label text not null,
      token_sha256 bytea not null unique,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      expires_at timestamptz,
      revoked_at timestamptz
    );
    -- A person's live tokens, listed by id (pages) and revoked together when the person is disabled.
    create index staff_tokens_staff_idx on staff_tokens (staff_id, id) where revoked_at is null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table staff_tokens;
    drop table staff;
  `.execute(db);
}
