/**
 * What a tariff must satisfy beyond its schema: bands and thresholds strictly ascending, so
 * "the band from X" and "the smallest threshold" always name exactly one entry, and a start
 * that is not in the past, so the tariff in force at any past moment never changes.
 */
import type { TariffRules } from "@dos/contracts";

/** The problems of a tariff's rules; empty when none. */
export function tariffRuleProblems(rules: TariffRules): string[] {
  return [
    ...ascending(rules.weight_bands, "weight_bands", "from_kg"),
    ...ascending(rules.volume_bands, "volume_bands", "from_dm3"),
    ...ascending(rules.slot_surcharges, "slot_surcharges", "shorter_than_minutes"),
    ...ascending(rules.lead_time_surcharges, "lead_time_surcharges", "shorter_than_minutes"),
  ];
}

function ascending<T, K extends keyof T & string>(items: readonly T[], label: string, key: K): string[] {
  const problems: string[] = [];
  for (let i = 1; i < items.length; i++) {
    const previous = items[i - 1]?.[key] as number;
    const current = items[i]?.[key] as number;
    if (!(current > previous)) {
      problems.push(`${label}[${i}].${key} must be greater than ${label}[${i - 1}].${key} (${previous})`);
    }
  }
  return problems;
}

/** A start in the past would re-price deliveries already quoted; a small skew between clocks is tolerated. */
export function effectiveFromProblem(effectiveFrom: Date, now: Date, toleranceMs: number): string | null {
  return effectiveFrom.getTime() < now.getTime() - toleranceMs ? "effective_from must not be in the past" : null;
}
