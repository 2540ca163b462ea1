/** True when PostgreSQL refused a write because of a unique index (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as { code?: string; constraint?: string };
  return pgError?.code === "23505" && (constraint === undefined || pgError.constraint === constraint);
}
