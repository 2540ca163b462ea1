/**
 * geo.vehicle_positions: a TimescaleDB hypertable with compression and retention policies when
 * the extension can be loaded, else a table partitioned natively by day (partitions created
 * ahead, dropped after the retention by maintain_vehicle_position_partitions). The migration
 * says which it picked in its log and in the table's comment.
 */
import { createLogger } from "@dos/service-kit";
import { type Kysely, sql } from "kysely";
import {
  detectStorageMode,
  isHypertable,
  nativeDownStatements,
  nativeStatements,
  timescaleDownStatements,
  timescaleStatements,
} from "../src/storage/storage-mode.ts";

export async function up(db: Kysely<unknown>): Promise<void> {
  const { mode, reason } = await detectStorageMode(db);
  const statements = mode === "timescaledb" ? timescaleStatements() : nativeStatements();
  for (const statement of statements) await sql.raw(statement).execute(db);
  const description =
    mode === "timescaledb"
      ? "TimescaleDB hypertable (1-day chunks, compression and retention policies)"
      : "native partitioning by day (maintain_vehicle_position_partitions)";
  await sql.raw(`comment on table vehicle_positions is 'storage: ${description}; ${reason}'`).execute(db);
  createLogger("geo-ingest-migrate", process.env.LOG_LEVEL ?? "info").info(
    { storage_mode: mode, reason },
    `vehicle_positions stored as ${description}`,
  );
}

/**
 * Drops what `up` created, the way its mode must be undone: a hypertable's compression first
 * (timescaleDownStatements), so that no compressed-chunk table outlives it. The extension stays:
 * `up` created it only if it was missing, and other schemas may use it.
 */
export async function down(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{
    exists: boolean;
  }>`select to_regclass('vehicle_positions') is not null as exists`.execute(db);
  const statements = !rows[0]?.exists
    ? ["drop function if exists maintain_vehicle_position_partitions(integer, integer)"]
    : (await isHypertable(db))
      ? timescaleDownStatements()
      : nativeDownStatements();
  for (const statement of statements) await sql.raw(statement).execute(db);
}
