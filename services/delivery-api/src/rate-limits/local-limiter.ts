/**
 * A GCRA limiter held in this process's memory, for budgets that need not be shared between
 * replicas (failed authentications per client address and per e-mail). The keys an attacker
 * chooses cannot grow it without bound: past `maxKeys` the least recently used key is dropped,
 * which can only forget failures, never refuse someone new.
 */
import { applyRequests, type Decision, type RatePolicy } from "./gcra.ts";

export interface LocalLimiter {
  readonly policy: RatePolicy;
  /** Spends one unit under this key, or refuses (spending nothing). */
  take(key: string): Decision;
  /** Gives back a unit taken for a request that turned out not to count (a valid login). */
  refund(key: string): void;
}

export function createLocalLimiter(policy: RatePolicy, maxKeys: number, clock: () => number = Date.now): LocalLimiter {
  const tats = new Map<string, number>();
  const intervalMs = (policy.windowSeconds * 1000) / policy.quota;
  return {
    policy,
    take(key) {
      const { decisions, tat } = applyRequests(tats.get(key) ?? 0, clock(), policy, 1);
      const decision = decisions[0] as Decision;
      if (!decision.allowed) return decision;
      tats.delete(key);
      if (tats.size >= maxKeys) {
        const oldest = tats.keys().next().value;
        if (oldest !== undefined) tats.delete(oldest);
      }
      tats.set(key, tat);
      return decision;
    },
    refund(key) {
      const tat = tats.get(key);
      if (tat !== undefined) tats.set(key, tat - intervalMs);
    },
  };
}
