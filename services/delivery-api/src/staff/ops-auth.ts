/**
 * Authentication of the operator API: `Authorization: Bearer <token>` on every /ops/v1 route.
 * - API_OPS_TOKEN is the automation actor (admin), compared in constant time (both sides hashed
 *   first, so neither the content nor the length leaks through timing), before anything else:
 *   automation is never held back by others' failures.
 * - A `dos_staff_…` token is a person: looked up by its SHA-256 (the stored form) with its
 *   holder; a revoked or expired token, or a disabled person, is no match. A success is cached
 *   like a client login (auth-cache.ts): this replica forgets its staff logins at once when a
 *   token is revoked or a person changed, the others within API_AUTH_CACHE_MS.
 * Failures are budgeted per client address (auth-guard.ts, a budget of its own, apart from the
 * client API's): past API_AUTH_FAILURE_QUOTA, a 429 before any lookup, so a flood of made-up
 * staff tokens costs at most the budget in database reads. Live tokens are trusted (loaded at
 * start and refreshed, trusted-tokens.ts) and skip the budget, as on the client API.
 */
import { hash, timingSafeEqual } from "node:crypto";
import { unauthorized } from "@dos/service-kit";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AuthCache } from "../auth/auth-cache.ts";
import type { AuthGuard, Charge } from "../auth/auth-guard.ts";
import type { Db } from "../db/database.ts";
import { setRateLimitHeaders, tooManyRequests } from "../rate-limits/rate-limit-headers.ts";
import { AUTOMATION, type OpsActor } from "./ops-actor.ts";
import { findActiveStaffLogin, touchStaffTokenUse } from "./staff.repository.ts";
import { isStaffTokenShaped } from "./staff-token.ts";

/** A staff login as this replica remembers it. */
export interface StaffLogin {
  tokenSha256: Buffer;
  /** When the token stops working (ms), or null: a cached login never outlives its token. */
  expiresAtMs: number | null;
  actor: OpsActor;
}

export interface OpsAuthDeps {
  automationToken: string;
  db: Db;
  cache: AuthCache<StaffLogin>;
  guard: AuthGuard;
  /** Called before each staff token lookup in the database (a metric). */
  onLookup?: () => void;
  /** Called at each 429 past the failure budget (a metric). */
  onRefusal?: () => void;
}

/** The 401's words, unchanged since the operator API had one token. */
const REQUIRED = "Authorization: Bearer <operator token> is required";
/** Longer is no token of ours: refused before hashing. */
const MAX_TOKEN_LENGTH = 256;

const sha256 = (text: string) => hash("sha256", text, "buffer");

/** An onRequest hook that sets `request.actor`, or answers 401 (429 past the failure budget). */
export function opsAuthHook({ automationToken, db, cache, guard, onLookup, onRefusal }: OpsAuthDeps) {
  const automation = sha256(automationToken);
  const failure = (reply: FastifyReply, charge: Charge) => {
    setRateLimitHeaders(reply, charge.policyName, charge.limiter.policy, charge.decision);
    if (charge.decision.allowed) return unauthorized(REQUIRED);
    onRefusal?.();
    return tooManyRequests("too many failed authentications from this address", charge.decision);
  };

  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization;
    const presented = typeof header === "string" && header.startsWith("Bearer ") ? header.slice(7) : "";
    if (presented === "" || presented.length > MAX_TOKEN_LENGTH)
      throw failure(reply, guard.charge(request.ip, undefined));
    const digest = sha256(presented);
    if (timingSafeEqual(digest, automation)) {
      request.actor = AUTOMATION;
      return;
    }
    // Not the automation token, and not shaped like a staff token: nothing to look up.
    if (!isStaffTokenShaped(presented)) throw failure(reply, guard.charge(request.ip, undefined));
    let login = cache.get(digest);
    if (login && login.expiresAtMs !== null && login.expiresAtMs <= Date.now()) login = undefined;
    if (!login) {
      const trusted = guard.isTrusted(digest);
      // An untrusted token's lookup is paid for before it is made, as on the client API.
      const charge = trusted ? undefined : guard.charge(request.ip, undefined);
      if (charge && !charge.decision.allowed) throw failure(reply, charge);
      onLookup?.();
      login = await lookUp(db, digest);
      if (!login) {
        if (!charge) guard.distrust(digest);
        throw failure(reply, charge ?? guard.charge(request.ip, undefined));
      }
      if (charge) guard.refund(request.ip);
      guard.trust([digest]);
      cache.set(login);
    }
    // The lookup is by hash; the constant-time comparison guards against any index-level shortcut.
    if (!timingSafeEqual(login.tokenSha256, digest)) throw failure(reply, guard.charge(request.ip, undefined));
    request.actor = login.actor;
  };
}

async function lookUp(db: Db, digest: Buffer): Promise<StaffLogin | undefined> {
  const found = await findActiveStaffLogin(db, digest);
  if (!found) return undefined;
  // In the background: the request does not wait for its token's last use to be written.
  touchStaffTokenUse(db, found.token_id).catch(() => undefined);
  return {
    tokenSha256: found.token_sha256,
    expiresAtMs: found.expires_at ? found.expires_at.getTime() : null,
    actor: { kind: "staff", id: found.staff_id, email: found.email, name: found.name, role: found.role },
  };
}
