/**
 * What a tariff must satisfy beyond its schema and its rules (bands and thresholds strictly
 * ascending: `tariffRuleProblems` of libs/contracts, shared with the operator's preview of a
 * draft): a start that is not in the past, so the tariff in force at any past moment never changes.
 */
/** A start in the past would re-price deliveries already quoted; a small skew between clocks is tolerated. */
export function effectiveFromProblem(effectiveFrom: Date, now: Date, toleranceMs: number): string | null {
  return effectiveFrom.getTime() < now.getTime() - toleranceMs ? "effective_from must not be in the past" : null;
}
