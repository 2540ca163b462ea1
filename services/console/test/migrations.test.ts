import { testMigrations } from "@dos/service-kit/testing-migrations";
import { sql } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";

testMigrations({
  label: "console_migrations",
  schema: SCHEMA,
  migrations,
  folder: new URL("../migrations/", import.meta.url),
  rows: "users",
  seed: async (db) => {
    await sql`
      insert into users (api_user_id, account_id, email, password_hash)
      values (7, 3, 'anne@shop.example', '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA')
    `.execute(db);
    await sql`
      insert into one_time_links (user_id, purpose, token_sha256, expires_at)
      select id, 'invitation', sha256('t'), now() + interval '1 hour' from users
    `.execute(db);
    await sql`insert into staff_credentials (staff_id, email) values (4, 'dispatch@operator.example')`.execute(db);
    await sql`
      insert into sessions (token_sha256, kind, staff_id, expires_at, api_token_id, api_token_sealed)
      values (sha256('s'), 'staff', 4, now() + interval '1 hour', 9, '\\x00')
    `.execute(db);
    await sql`
      insert into sessions (token_sha256, kind, user_id, expires_at, api_token_id, api_token_sealed)
      select sha256('u'), 'shop', id, now() + interval '1 hour', 10, '\\x00' from users
    `.execute(db);
  },
  objects: [
    "relation | one_time_links | r |",
    "relation | sessions | r |",
    "relation | sign_in_failures | r |",
    "relation | staff_challenges | r |",
    "relation | staff_credentials | r |",
    "relation | staff_invitations | r |",
    "relation | staff_passkeys | r |",
    "relation | users | r |",
  ],
});
