import { sql } from "kysely";
import type { Db } from "../db/database.ts";

/** The active token with this hash, for the user with this e-mail, with the user's account. */
export function findActiveTokenByHash(db: Db, tokenSha256: Buffer, email: string) {
  return db
    .selectFrom("api_tokens")
    .innerJoin("users", "users.id", "api_tokens.user_id")
    .innerJoin("accounts", "accounts.id", "users.account_id")
    .where("api_tokens.token_sha256", "=", tokenSha256)
    .where("api_tokens.revoked_at", "is", null)
    .where((eb) => eb(eb.fn("lower", ["users.email"]), "=", email.toLowerCase()))
    .select([
      "api_tokens.id as token_id",
      "api_tokens.token_sha256",
      "users.id as user_id",
      "accounts.id as account_id",
      "accounts.company_name",
      "accounts.environment",
      "accounts.bring_back_containers",
      "accounts.default_task_gap_minutes",
      "accounts.default_task_duration_minutes",
      "accounts.recipient_phone_optional",
      "accounts.phone_default_region",
      "accounts.rate_limit_quota",
      "accounts.rate_limit_window_seconds",
    ])
    .executeTakeFirst();
}

/** Records a token's use, at most once a minute (a cache miss of every request would be a write each). */
export function touchTokenUse(db: Db, tokenId: number) {
  return db
    .updateTable("api_tokens")
    .set({ last_used_at: sql<Date>`now()` })
    .where("id", "=", tokenId)
    .where((eb) =>
      eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", sql<Date>`now() - interval '1 minute'`)]),
    )
    .execute();
}

/** Active tokens created after `afterId` (at most `limit`, oldest first): their ids and hashes. */
export function listActiveTokensAfter(db: Db, afterId: number, limit: number) {
  return db
    .selectFrom("api_tokens")
    .select(["id", "token_sha256"])
    .where("id", ">", afterId)
    .where("revoked_at", "is", null)
    .orderBy("id")
    .limit(limit)
    .execute();
}
