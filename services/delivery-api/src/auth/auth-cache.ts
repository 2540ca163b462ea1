/**
 * A short-lived memory of recent successful logins, so that a client sending many requests does
 * not cost a PostgreSQL round trip each. Keyed by the SHA-256 of the token (never the token);
 * only successes are kept, so a wrong token always reaches the database. An entry lives
 * `ttlMs` at most: a token revoked (or an account changed) on another replica keeps working
 * here until then; the operator API of this replica clears the cache at once.
 */
import type { ClientAccount } from "./client-account.ts";

export interface CachedLogin {
  tokenSha256: Buffer;
  emailLower: string;
  account: ClientAccount;
}

/** The cache of a surface's logins: client API logins by default, the operator API's staff logins too. */
export interface AuthCache<T extends { tokenSha256: Buffer } = CachedLogin> {
  get(tokenSha256: Buffer): T | undefined;
  set(login: T): void;
  /** Forgets every login: after a revocation or an account change. */
  clear(): void;
}

/** Beyond this many tokens, the oldest entries are dropped first. */
const MAX_ENTRIES = 10_000;

export function createAuthCache<T extends { tokenSha256: Buffer } = CachedLogin>(
  ttlMs: number,
  clock: () => number = Date.now,
): AuthCache<T> {
  const entries = new Map<string, { login: T; expiresAt: number }>();
  const keyOf = (hash: Buffer) => hash.toString("base64");
  return {
    get(tokenSha256) {
      if (ttlMs === 0) return undefined;
      const key = keyOf(tokenSha256);
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt > clock()) return entry.login;
      entries.delete(key);
      return undefined;
    },
    set(login) {
      if (ttlMs === 0) return;
      const key = keyOf(login.tokenSha256);
      entries.delete(key);
      if (entries.size >= MAX_ENTRIES) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(key, { login, expiresAt: clock() + ttlMs });
    },
    clear() {
      entries.clear();
    },
  };
}
