/**
 * "Did you mean": the known name nearest to a mistyped one, by edit distance (Levenshtein), for
 * error messages that name what the user probably meant (config variables, CLI flags).
 */

/** The candidate fewest edits away from `name`, if any is at most `maxDistance` away. */
export function nearestName(name: string, candidates: Iterable<string>, maxDistance: number): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance <= maxDistance && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Insertions, deletions and substitutions that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      row[j] = Math.min(current + 1, (row[j - 1] ?? 0) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] ?? 0;
}
