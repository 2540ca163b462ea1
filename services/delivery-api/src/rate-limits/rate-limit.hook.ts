/**
 * The client API's limit per account: an onRequest hook, after authentication, that spends one
 * unit of the account's quota (shared by every replica, account-limiter.ts), sets the
 * RateLimit fields on the answer, and refuses with 429 once the quota is spent.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AccountLimiter } from "./account-limiter.ts";
import type { RatePolicy } from "./gcra.ts";
import { POLICY_NAMES, setRateLimitHeaders, tooManyRequests } from "./rate-limit-headers.ts";

export function accountRateLimitHook(limiter: AccountLimiter, defaultPolicy: RatePolicy, onRefusal?: () => void) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const policy = request.account.rateLimit ?? defaultPolicy;
    const decision = await limiter.take(request.account.id, policy);
    setRateLimitHeaders(reply, POLICY_NAMES.account, policy, decision);
    if (!decision.allowed) {
      onRefusal?.();
      throw tooManyRequests(
        `this account sends more than ${policy.quota} requests per ${policy.windowSeconds} s`,
        decision,
      );
    }
  };
}
