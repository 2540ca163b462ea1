/**
 * What stands between a stranger and the token lookup (a PostgreSQL round trip): failed
 * authentications are counted per client address and per e-mail, and once either has spent
 * its budget, further attempts are refused with 429 before the database is asked.
 *
 * A real user is not locked out by someone else's failures: a token this replica has seen
 * valid (every active token is loaded at start, and each one verified since is added) skips
 * both budgets and is looked up as usual. Only a token never seen valid here, from a flooding
 * address or for a flooded e-mail, waits; the budgets refill, so even that is a delay.
 *
 * The counts live in this replica's memory: behind N replicas an address gets about N budgets.
 */
import type { Decision } from "../rate-limits/gcra.ts";
import { createLocalLimiter } from "../rate-limits/local-limiter.ts";
import { POLICY_NAMES } from "../rate-limits/rate-limit-headers.ts";

export interface AuthGuard {
  /** Loads the hashes of every active token, so that their holders are never held back. */
  trust(tokenSha256s: Iterable<Buffer>): void;
  /** The refusal owed to an unknown token from this address or for this e-mail; null when it may be looked up. */
  refusal(address: string, tokenSha256: Buffer | undefined, emailLower: string | undefined): Refusal | null;
  /** A lookup found the token: it is trusted from now on. */
  verified(tokenSha256: Buffer): void;
  /** A lookup did not find the token (revoked): its next attempts are counted like anyone's. */
  distrust(tokenSha256: Buffer): void;
  /** A failed authentication: spends from the address's and the e-mail's budgets. */
  failed(address: string, emailLower: string | undefined): Refusal;
}

/** A budget's state after (or refusal of) a request, with the policy it belongs to. */
export interface Refusal {
  policyName: string;
  limiter: ReturnType<typeof createLocalLimiter>;
  decision: Decision;
}

/** Keys (addresses, e-mails, trusted tokens) kept at most, each; beyond, the oldest go first. */
const MAX_KEYS = 100_000;

export function createAuthGuard(policy: { quota: number; windowSeconds: number }, clock?: () => number): AuthGuard {
  const perAddress = createLocalLimiter(policy, MAX_KEYS, clock);
  const perEmail = createLocalLimiter(policy, MAX_KEYS, clock);
  const trusted = new Set<string>();
  const keyOf = (hash: Buffer) => hash.toString("base64");
  const trust = (hash: Buffer) => {
    const key = keyOf(hash);
    if (trusted.has(key)) return;
    if (trusted.size >= MAX_KEYS) {
      const oldest = trusted.values().next().value;
      if (oldest !== undefined) trusted.delete(oldest);
    }
    trusted.add(key);
  };
  return {
    trust(hashes) {
      for (const hash of hashes) trust(hash);
    },
    refusal(address, tokenSha256, emailLower) {
      if (tokenSha256 && trusted.has(keyOf(tokenSha256))) return null;
      const byAddress = perAddress.refused(address);
      if (byAddress) return { policyName: POLICY_NAMES.failuresPerAddress, limiter: perAddress, decision: byAddress };
      const byEmail = emailLower === undefined ? null : perEmail.refused(emailLower);
      if (byEmail) return { policyName: POLICY_NAMES.failuresPerEmail, limiter: perEmail, decision: byEmail };
      return null;
    },
    verified: trust,
    distrust(hash) {
      trusted.delete(keyOf(hash));
    },
    failed(address, emailLower) {
      if (emailLower !== undefined) perEmail.spend(emailLower);
      return { policyName: POLICY_NAMES.failuresPerAddress, limiter: perAddress, decision: perAddress.spend(address) };
    },
  };
}
