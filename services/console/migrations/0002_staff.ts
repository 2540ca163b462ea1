/**
 * The operator's staff sign in to the console too (issue 19). Who they are (e-mail, name, role,
 * disabled) is delivery-api's `staff`; the console keeps how they prove it: a password, a TOTP
 * secret (sealed with CONSOLE_SECRET_KEY) and passkeys, keyed by delivery-api's staff id. Their
 * invitations, the short-lived challenges that bind a sign-in's two steps, and sessions of a
 * second kind, holding the staff token minted for them.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table staff_credentials (
      -- delivery-api's staff id: the person is theirs, the credentials ours.
      staff_id bigint primary key check (staff_id > 0),
      email text not null check (length(email) between 3 and 254),
      -- argon2id in its PHC string form; null until the invitation is accepted.
      password_hash text check (password_hash like '$argon2id$%'),
      password_changed_at timestamptz,
      -- The authenticator app's secret (base32), sealed (AES-256-GCM), once enrolled.
      totp_secret_sealed bytea,
      -- The time step of the last code accepted: a code is accepted once, and never one older.
      totp_last_step bigint,
      created_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`create unique index staff_credentials_email_key on staff_credentials (lower(email))`.execute(db);
  await sql`
    create table staff_passkeys (
      id bigint generated always as identity primary key,
      staff_id bigint not null references staff_credentials (staff_id) on delete cascade,
      -- The WebAuthn credential id, base64url, as the browser names it in an assertion.
      credential_id text not null unique check (length(credential_id) between 1 and 1400),
      public_key bytea not null,
      -- The authenticator's signature counter: an assertion with a lower one is a clone's.
      sign_count bigint not null default 0 check (sign_count >= 0),
      transports text[] not null default '{}',
      name text not null check (length(name) between 1 and 100),
      created_at timestamptz not null default now(),
      last_used_at timestamptz
    )
  `.execute(db);
  await sql`create index staff_passkeys_staff on staff_passkeys (staff_id)`.execute(db);
  await sql`
    create table staff_invitations (
      id bigint generated always as identity primary key,
      staff_id bigint not null references staff_credentials (staff_id) on delete cascade,
      token_sha256 bytea not null unique check (length(token_sha256) = 32),
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`create index staff_invitations_staff on staff_invitations (staff_id)`.execute(db);
  await sql`
    create table staff_challenges (
      id bigint generated always as identity primary key,
      -- The SHA-256 of the challenge cookie's value.
      token_sha256 bytea not null unique check (length(token_sha256) = 32),
      staff_id bigint not null references staff_credentials (staff_id) on delete cascade,
      -- sign_in: the password was right, a second factor is due; enrol: the invitation was
      -- accepted, a second factor is to be enrolled.
      purpose text not null check (purpose in ('sign_in', 'enrol')),
      -- The WebAuthn challenge last handed out for this step (base64url), if any.
      webauthn_challenge text,
      -- An authenticator secret offered at enrolment, sealed, until a code proves it was saved.
      pending_totp_sealed bytea,
      -- Wrong second factors given within this challenge; it stops working after a few.
      failures integer not null default 0,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )
  `.execute(db);
  await sql`create index staff_challenges_expires on staff_challenges (expires_at)`.execute(db);

  // A session is a shop user's (user_id) or a staff person's (staff_id); either way it holds the
  // sealed token it calls delivery-api with (client API token, or staff token).
  await sql`alter table sessions add column kind text not null default 'shop'`.execute(db);
  await sql`alter table sessions alter column kind drop default`.execute(db);
  await sql`alter table sessions alter column user_id drop not null`.execute(db);
  await sql`
    alter table sessions add column staff_id bigint references staff_credentials (staff_id) on delete cascade
  `.execute(db);
  await sql`
    alter table sessions add constraint sessions_kind_check check (
      (kind = 'shop' and user_id is not null and staff_id is null)
      or (kind = 'staff' and staff_id is not null and user_id is null)
    )
  `.execute(db);
  await sql`create index sessions_staff on sessions (staff_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Staff sessions cannot be shop sessions: they go, with the staff tables.
  await sql`delete from sessions where kind = 'staff'`.execute(db);
  await sql`drop index sessions_staff`.execute(db);
  await sql`alter table sessions drop constraint sessions_kind_check`.execute(db);
  await sql`alter table sessions drop column staff_id`.execute(db);
  await sql`alter table sessions alter column user_id set not null`.execute(db);
  await sql`alter table sessions drop column kind`.execute(db);
  await sql`drop table staff_challenges`.execute(db);
  await sql`drop table staff_invitations`.execute(db);
  await sql`drop table staff_passkeys`.execute(db);
  await sql`drop table staff_credentials`.execute(db);
}
