/**
 * Authentication of the client API: `X-User-Email` + `X-User-Token` on every /api/v2 route.
 * Tokens are stored as SHA-256 and compared in constant time; a missing or wrong pair is a 401
 * in the error shape, and the token never reaches a log (the logger redacts the header).
 */
import { hash, timingSafeEqual } from "node:crypto";
import { unauthorized } from "@dos/service-kit";
import type { FastifyRequest } from "fastify";
import type { Db } from "../db/database.ts";
import { findActiveTokenByHash } from "./auth.repository.ts";
import type { AuthCache, CachedLogin } from "./auth-cache.ts";

/** The caller's account, as every /api/v2 handler sees it. */
export interface ClientAccount {
  id: number;
  userId: number;
  companyName: string;
  environment: "production" | "test";
  bringBackContainers: boolean;
  defaultTaskGapMinutes: number;
  defaultTaskDurationMinutes: number;
  recipientPhoneOptional: boolean;
  phoneDefaultRegion: string;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the client authentication hook on /api/v2 routes. */
    account: ClientAccount;
  }
}

export function hashToken(token: string): Buffer {
  // The one-shot form: half the cost of a Hash object, paid on every request.
  return hash("sha256", token, "buffer");
}

/** An onRequest hook that authenticates the caller or answers 401. */
export function clientAuthHook(db: Db, cache: AuthCache) {
  return async (request: FastifyRequest) => {
    const email = request.headers["x-user-email"];
    const token = request.headers["x-user-token"];
    if (typeof email !== "string" || typeof token !== "string" || email === "" || token === "") {
      throw unauthorized("X-User-Email and X-User-Token headers are required");
    }
    if (email.length > 254 || token.length > 256) throw unauthorized("X-User-Email or X-User-Token is invalid");
    const presented = hashToken(token);
    const emailLower = email.toLowerCase();
    let login = cache.get(presented);
    if (!login) {
      // Only a fresh lookup is cached: a hit never extends its entry's life.
      login = await lookUp(db, presented, emailLower);
      if (login) cache.set(login);
    }
    // The lookup is by hash; the constant-time comparison guards against any index-level shortcut.
    if (!login || login.emailLower !== emailLower || !timingSafeEqual(login.tokenSha256, presented)) {
      throw unauthorized("X-User-Email or X-User-Token is invalid");
    }
    request.account = login.account;
  };
}

async function lookUp(db: Db, presented: Buffer, emailLower: string): Promise<CachedLogin | undefined> {
  const found = await findActiveTokenByHash(db, presented, emailLower);
  if (!found) return undefined;
  return {
    tokenSha256: found.token_sha256,
    emailLower,
    account: {
      id: found.account_id,
      userId: found.user_id,
      companyName: found.company_name,
      environment: found.environment,
      bringBackContainers: found.bring_back_containers,
      defaultTaskGapMinutes: found.default_task_gap_minutes,
      defaultTaskDurationMinutes: found.default_task_duration_minutes,
      recipientPhoneOptional: found.recipient_phone_optional,
      phoneDefaultRegion: found.phone_default_region,
    },
  };
}
