/**
 * A GCRA limiter held in this process's memory, for budgets that need not be shared between
 * replicas (failed authentications per client address and per e-mail). The keys an attacker
 * chooses cannot grow it without bound: past `maxKeys` the least recently used key is dropped,
 * which can only forget failures, never refuse someone new.
 */
import { applyRequests, type Decision, type RatePolicy, refusal } from "./gcra.ts";

export interface LocalLimiter {
  readonly policy: RatePolicy;
  /** The refusal a request under this key gets now, without spending anything; null when allowed. */
  refused(key: string): Decision | null;
  /** Spends one unit under this key (a failure): the bucket as it is after. */
  spend(key: string): Decision;
}

export function createLocalLimiter(policy: RatePolicy, maxKeys: number, clock: () => number = Date.now): LocalLimiter {
  const tats = new Map<string, number>();
  return {
    policy,
    refused(key) {
      const tat = tats.get(key);
      return tat === undefined ? null : refusal(tat, clock(), policy);
    },
    spend(key) {
      const now = clock();
      const { decisions, tat } = applyRequests(tats.get(key) ?? 0, now, policy, 1);
      tats.delete(key);
      if (tats.size >= maxKeys) {
        const oldest = tats.keys().next().value;
        if (oldest !== undefined) tats.delete(oldest);
      }
      tats.set(key, tat);
      return decisions[0] as Decision;
    },
  };
}
