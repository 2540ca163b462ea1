/**
 * What a PostgreSQL error says about the rows written, by its SQLSTATE: services decide from it
 * whether to answer a precise 4xx (the data is at fault) or to fail as the dependency did.
 */

const sqlState = (error: unknown): string => String((error as { code?: unknown } | null)?.code ?? "");

/** True when PostgreSQL refused a write because of a unique index (23505), that index when named. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return (
    sqlState(error) === "23505" &&
    (constraint === undefined || (error as { constraint?: unknown }).constraint === constraint)
  );
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity): the rows, not the database, are at fault. */
export function refusesData(error: unknown): boolean {
  return /^2[23]/.test(sqlState(error));
}
