/**
 * The console schema: the credentials of the people who sign in, their one-time links
 * (invitations, password resets) and sessions, and the failed sign-ins that throttle guessing.
 * Who a person is (e-mail, account) is delivery-api's: a row here only points at its user.
 * Every secret is stored as a hash (links, session cookies) or sealed (a session's API token).
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id bigint generated always as identity primary key,
      -- delivery-api's user and account ids, as its operator API names them.
      api_user_id bigint not null unique check (api_user_id > 0),
      account_id bigint not null check (account_id > 0),
      email text not null check (length(email) between 3 and 254),
      -- argon2id in its PHC string form; null until the invitation is accepted.
      password_hash text check (password_hash like '$argon2id$%'),
      password_changed_at timestamptz,
      created_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`create unique index users_email_key on users (lower(email))`.execute(db);
  await sql`
    create table one_time_links (
      id bigint generated always as identity primary key,
      user_id bigint not null references users (id) on delete cascade,
      purpose text not null check (purpose in ('invitation', 'password_reset')),
      token_sha256 bytea not null unique check (length(token_sha256) = 32),
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`create index one_time_links_user on one_time_links (user_id)`.execute(db);
  await sql`
    create table sessions (
      id bigint generated always as identity primary key,
      token_sha256 bytea not null unique check (length(token_sha256) = 32),
      user_id bigint not null references users (id) on delete cascade,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      -- The absolute expiry; the idle one is last_seen_at plus the configured idle time.
      expires_at timestamptz not null,
      -- Set by sign-out; the sweep then revokes the session's API token and deletes the row.
      ended_at timestamptz,
      -- The client API token the console calls delivery-api with for this session, sealed with
      -- CONSOLE_SECRET_KEY (AES-256-GCM), and its id there, to revoke it when the session ends.
      api_token_id bigint not null,
      api_token_sealed bytea not null
    )
  `.execute(db);
  await sql`create index sessions_user on sessions (user_id)`.execute(db);
  await sql`create index sessions_expires on sessions (expires_at)`.execute(db);
  await sql`
    create table sign_in_failures (
      -- 'email:<lower-case e-mail>' or 'address:<client address>'.
      key text not null check (length(key) <= 300),
      failed_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`create index sign_in_failures_key on sign_in_failures (key, failed_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table sign_in_failures`.execute(db);
  await sql`drop table sessions`.execute(db);
  await sql`drop table one_time_links`.execute(db);
  await sql`drop table users`.execute(db);
}
