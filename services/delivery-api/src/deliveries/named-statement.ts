/**
 * Runs a query as a named prepared statement: PostgreSQL parses and plans it once per
 * connection instead of at every call. For the create path's two large statements (the
 * catalogue read and the group insert) planning cost more than running them (0.56 ms of
 * PostgreSQL CPU per catalogue read unprepared, 0.14 ms prepared). Kysely has no prepared
 * statements, so the compiled SQL goes to the pool directly; the name must only ever be used
 * with one SQL text (the parameters are values, never SQL).
 */
import type { Database } from "@dos/service-kit";
import type { Kysely, RawBuilder } from "kysely";

export type Pool = Database<unknown>["pool"];

export async function runNamed<R, DB>(db: Kysely<DB>, pool: Pool, name: string, query: RawBuilder<R>): Promise<R[]> {
  const compiled = query.compile(db);
  const result = await pool.query({ name, text: compiled.sql, values: [...compiled.parameters] });
  return result.rows as R[];
}
