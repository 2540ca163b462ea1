/**
 * What stands between a stranger and the token lookup (a PostgreSQL round trip): every lookup
 * of a token this replica does not trust is charged to the client address's budget and the
 * e-mail's, and given back if the token proves valid; a failure without a lookup (missing
 * headers) is charged too. Once either budget is spent, the request is refused with 429 before
 * the database is asked, so a flood costs at most the budget in lookups, however concurrent.
 *
 * A real user is not locked out by someone else's failures: a trusted token (every active
 * token, loaded at start and refreshed, see trusted-tokens.ts, and each one verified since)
 * skips both budgets and is looked up as usual.
 *
 * The budgets live in this replica's memory: behind N replicas an address gets about N.
 */
import type { Decision } from "../rate-limits/gcra.ts";
import { createLocalLimiter, type LocalLimiter } from "../rate-limits/local-limiter.ts";
import { POLICY_NAMES } from "../rate-limits/rate-limit-headers.ts";

/** A budget's state after a charge (or its refusal), with the policy it belongs to. */
export interface Charge {
  policyName: string;
  limiter: LocalLimiter;
  decision: Decision;
}

export interface AuthGuard {
  /** Adds tokens (their SHA-256) whose holders skip the budgets. */
  trust(tokenSha256s: Iterable<Buffer>): void;
  isTrusted(tokenSha256: Buffer): boolean;
  /** A lookup did not find a trusted token (revoked): it is counted like anyone's from now on. */
  distrust(tokenSha256: Buffer): void;
  /** Charges one failure, or the lookup of an untrusted token, to the address and the e-mail. */
  charge(address: string, emailLower: string | undefined): Charge;
  /** The lookup charged found a valid token: both units (the address's alone without an e-mail) are given back. */
  refund(address: string, emailLower?: string): void;
}

/** Keys (addresses, e-mails, trusted tokens) kept at most, each; beyond, the oldest go first. */
const MAX_KEYS = 100_000;

export function createAuthGuard(policy: { quota: number; windowSeconds: number }, clock?: () => number): AuthGuard {
  const perAddress = createLocalLimiter(policy, MAX_KEYS, clock);
  const perEmail = createLocalLimiter(policy, MAX_KEYS, clock);
  const trusted = new Set<string>();
  const keyOf = (hash: Buffer) => hash.toString("base64");
  return {
    trust(hashes) {
      for (const hash of hashes) {
        const key = keyOf(hash);
        if (trusted.has(key)) continue;
        if (trusted.size >= MAX_KEYS) {
          const oldest = trusted.values().next().value;
          if (oldest !== undefined) trusted.delete(oldest);
        }
        trusted.add(key);
      }
    },
    isTrusted: (hash) => trusted.has(keyOf(hash)),
    distrust(hash) {
      trusted.delete(keyOf(hash));
    },
    charge(address, emailLower) {
      const byAddress = perAddress.take(address);
      const addressCharge = { policyName: POLICY_NAMES.failuresPerAddress, limiter: perAddress, decision: byAddress };
      if (!byAddress.allowed || emailLower === undefined) return addressCharge;
      const byEmail = perEmail.take(emailLower);
      if (byEmail.allowed) return addressCharge;
      perAddress.refund(address);
      return { policyName: POLICY_NAMES.failuresPerEmail, limiter: perEmail, decision: byEmail };
    },
    refund(address, emailLower) {
      perAddress.refund(address);
      if (emailLower !== undefined) perEmail.refund(emailLower);
    },
  };
}
