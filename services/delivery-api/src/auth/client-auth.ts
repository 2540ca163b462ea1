/**
 * Authentication of the client API: `X-User-Email` + `X-User-Token` on every /api/v2 route.
 * Tokens are stored as SHA-256 and compared in constant time; a missing or wrong pair is a 401
 * in the error shape, and the token never reaches a log (the logger redacts the header).
 * Failures are budgeted per client address and e-mail (auth-guard.ts): past the budget, a
 * 429 before any database lookup. Every failure's 401 carries the address budget's RateLimit
 * fields.
 */
import { hash, timingSafeEqual } from "node:crypto";
import { unauthorized } from "@dos/service-kit";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Db } from "../db/database.ts";
import { POLICY_NAMES, setRateLimitHeaders, tooManyRequests } from "../rate-limits/rate-limit-headers.ts";
import { findActiveTokenByHash, touchTokenUse } from "./auth.repository.ts";
import type { AuthCache, CachedLogin } from "./auth-cache.ts";
import type { AuthGuard, Charge } from "./auth-guard.ts";
import type { ClientAccount } from "./client-account.ts";

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

export interface ClientAuthDeps {
  db: Db;
  cache: AuthCache;
  guard: AuthGuard;
  /** Called before each token lookup in the database (a metric). */
  onLookup?: () => void;
  /** Called at each 429 past a failure budget (a metric). */
  onRefusal?: () => void;
}

const INVALID = "X-User-Email or X-User-Token is invalid";

/** An onRequest hook that authenticates the caller, or answers 401 (429 past the failure budget). */
export function clientAuthHook({ db, cache, guard, onLookup, onRefusal }: ClientAuthDeps) {
  /** The answer to a failed authentication, charged as `charge` says: 401, or 429 past the budget. */
  const failure = (reply: FastifyReply, charge: Charge, message: string) => {
    setRateLimitHeaders(reply, charge.policyName, charge.limiter.policy, charge.decision);
    if (charge.decision.allowed) return unauthorized(message);
    onRefusal?.();
    const whose = charge.policyName === POLICY_NAMES.failuresPerEmail ? "for this e-mail" : "from this address";
    return tooManyRequests(`too many failed authentications ${whose}`, charge.decision);
  };

  return async (request: FastifyRequest, reply: FastifyReply) => {
    const email = request.headers["x-user-email"];
    const token = request.headers["x-user-token"];
    if (typeof email !== "string" || typeof token !== "string" || email === "" || token === "") {
      throw failure(reply, guard.charge(request.ip, undefined), "X-User-Email and X-User-Token headers are required");
    }
    if (email.length > 254 || token.length > 256) throw failure(reply, guard.charge(request.ip, undefined), INVALID);
    const presented = hashToken(token);
    const emailLower = email.toLowerCase();
    let login = cache.get(presented);
    if (!login) {
      const trusted = guard.isTrusted(presented);
      // An untrusted token's lookup is paid for before it is made: concurrent requests cannot
      // all slip in before the first failure is counted.
      const charge = trusted ? undefined : guard.charge(request.ip, emailLower);
      if (charge && !charge.decision.allowed) throw failure(reply, charge, INVALID);
      onLookup?.();
      login = await lookUp(db, presented, emailLower);
      if (!login) {
        if (!charge) guard.distrust(presented);
        throw failure(reply, charge ?? guard.charge(request.ip, emailLower), INVALID);
      }
      if (charge) guard.refund(request.ip, emailLower);
      guard.trust([presented]);
      // Only a fresh lookup is cached: a hit never extends its entry's life.
      cache.set(login);
    }
    // The lookup is by hash; the constant-time comparison guards against any index-level shortcut.
    if (login.emailLower !== emailLower || !timingSafeEqual(login.tokenSha256, presented)) {
      throw failure(reply, guard.charge(request.ip, emailLower), INVALID);
    }
    request.account = login.account;
  };
}

async function lookUp(db: Db, presented: Buffer, emailLower: string): Promise<CachedLogin | undefined> {
  const found = await findActiveTokenByHash(db, presented, emailLower);
  if (!found) return undefined;
  // In the background: the request does not wait for its token's last use to be written.
  touchTokenUse(db, found.token_id).catch(() => undefined);
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
      rateLimit:
        found.rate_limit_quota === null || found.rate_limit_window_seconds === null
          ? null
          : { quota: found.rate_limit_quota, windowSeconds: found.rate_limit_window_seconds },
    },
  };
}
