/**
 * The two ways `vehicle_positions` is stored: a TimescaleDB hypertable where the extension can
 * be loaded, native declarative partitioning by day otherwise. Both have the same columns and
 * the same unique key, so reads and writes are the same SQL whichever was picked.
 */
import { type Kysely, sql } from "kysely";

export type StorageMode = "timescaledb" | "native";

/** Defaults the migration applies; the service reconciles them with its config at boot. */
const DEFAULT_RETENTION_DAYS = 30;
const DEFAULT_PARTITIONS_AHEAD_DAYS = 3;
/** Chunks older than this are compressed (TimescaleDB): late positions rarely arrive after it. */
const COMPRESS_AFTER_DAYS = 2;

/**
 * The oldest TimescaleDB whose documented API the hypertable path uses (create_hypertable with
 * by_range). The newest checked on a real server: 2.28 on PostgreSQL 15 (README, "Storage modes").
 */
const OLDEST_TIMESCALEDB = [2, 13] as const;

/** Whether a TimescaleDB version (`2.28.1`, `2.13.0-dev`) is at least OLDEST_TIMESCALEDB. */
export function timescaleVersionSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map((part) => Number.parseInt(part, 10));
  return major > OLDEST_TIMESCALEDB[0] || (major === OLDEST_TIMESCALEDB[0] && minor >= OLDEST_TIMESCALEDB[1]);
}

/**
 * TimescaleDB is usable only when its package is installed (pg_available_extensions), the
 * server preloads its library (CREATE EXTENSION fails without it), and the version the
 * migration would use (the installed one, else the package's default) has the API it calls.
 */
export async function detectStorageMode(db: Kysely<unknown>): Promise<{ mode: StorageMode; reason: string }> {
  const { rows } = await sql<{ available: boolean; preloaded: boolean; version: string | null }>`
    select
      exists (select 1 from pg_available_extensions where name = 'timescaledb') as available,
      coalesce(current_setting('shared_preload_libraries', true), '') like '%timescaledb%' as preloaded,
      coalesce(
        (select extversion from pg_extension where extname = 'timescaledb'),
        (select default_version from pg_available_extensions where name = 'timescaledb')
      ) as version
  `.execute(db);
  const row = rows[0];
  if (!row?.available) return { mode: "native", reason: "the timescaledb extension is not available" };
  if (!row.preloaded) return { mode: "native", reason: "timescaledb is installed but not in shared_preload_libraries" };
  if (!timescaleVersionSupported(row.version ?? "")) {
    return {
      mode: "native",
      reason: `timescaledb ${row.version} is older than ${OLDEST_TIMESCALEDB.join(".")}, whose API the migration uses`,
    };
  }
  return { mode: "timescaledb", reason: `the timescaledb extension is available (${row.version})` };
}

/** The mode an existing table was created in: a partitioned table is native, a plain one a hypertable. */
export async function storageModeOf(db: Kysely<unknown>): Promise<StorageMode> {
  const { rows } = await sql<{ relkind: string }>`
    select c.relkind from pg_class c
    where c.oid = to_regclass('vehicle_positions')
  `.execute(db);
  if (!rows[0]) throw new Error("table vehicle_positions does not exist: run the geo-ingest migration");
  return rows[0].relkind === "p" ? "native" : "timescaledb";
}

/** The columns, key and index shared by both modes; `partitioned` adds the native partition clause. */
export function tableStatement(partitioned: boolean): string {
  return `
    create table vehicle_positions (
      -- An opaque identifier: byte order keeps the unique key's comparisons cheap in any locale.
      vehicle_external_id text collate "C" not null,
      -- The tracker's time of the position (the time of the call when the tracker sent none).
      recorded_at timestamptz not null,
      received_at timestamptz not null,
      round_id bigint not null,
      provider text not null,
      tracker_id bigint,
      latitude double precision not null check (latitude between -90 and 90),
      longitude double precision not null check (longitude between -180 and 180),
      -- A position re-sent by a tracker (same vehicle, same time) is stored once.
      constraint vehicle_positions_vehicle_time_key unique (vehicle_external_id, recorded_at)
    )${partitioned ? " partition by range (recorded_at)" : ""}`;
}

const ROUND_INDEX_STATEMENT =
  "create index vehicle_positions_round_time_idx on vehicle_positions (round_id, recorded_at)";

/**
 * The hypertable path, written against TimescaleDB's documented API from 2.13 on (OLDEST_TIMESCALEDB):
 * create_hypertable with by_range, compression settings through ALTER TABLE, and the compression
 * and retention policies run by TimescaleDB's own job scheduler.
 */
export function timescaleStatements(retentionDays = DEFAULT_RETENTION_DAYS): string[] {
  return [
    "create extension if not exists timescaledb with schema public",
    tableStatement(false),
    ROUND_INDEX_STATEMENT,
    // The unique key already leads with the vehicle; the default time index would only cost writes.
    "select public.create_hypertable('vehicle_positions', public.by_range('recorded_at', interval '1 day'), create_default_indexes => false)",
    `alter table vehicle_positions set (
      timescaledb.compress,
      timescaledb.compress_segmentby = 'vehicle_external_id',
      timescaledb.compress_orderby = 'recorded_at desc'
    )`,
    `select public.add_compression_policy('vehicle_positions', compress_after => interval '${COMPRESS_AFTER_DAYS} days')`,
    `select public.add_retention_policy('vehicle_positions', drop_after => interval '${retentionDays} days')`,
  ];
}

/**
 * Undoing the hypertable path, in the order TimescaleDB's documentation gives. A plain DROP TABLE
 * of a hypertable with compressed chunks left their tables (`_timescaledb_internal.compress_hyper_*`)
 * behind on TimescaleDB 2.28, and DROP EXTENSION failed on them. So, first the background jobs
 * are removed (the docs: stop any compression policy before decompressing), then every compressed
 * chunk is decompressed (`decompress_chunk(c, true)` over `show_chunks`: true skips the
 * uncompressed ones), which drops its compressed table; compression is turned off, which drops
 * the internal compressed hypertable (it fails while any chunk is still compressed); and only
 * then is the table dropped. Decompressing costs time and disk in proportion to the compressed
 * data: on a large table, drop the old chunks first (drop_chunks) or run it in a maintenance
 * window. Not run here (no TimescaleDB on these machines).
 */
export function timescaleDownStatements(): string[] {
  return [
    "select public.remove_retention_policy('vehicle_positions', if_exists => true)",
    "select public.remove_compression_policy('vehicle_positions', if_exists => true)",
    "select public.decompress_chunk(c, true) from public.show_chunks('vehicle_positions') c",
    "alter table vehicle_positions set (timescaledb.compress = false)",
    "drop table vehicle_positions",
  ];
}

/** Undoing the native path: the partitioned table (its partitions with it) and its maintenance function. */
export function nativeDownStatements(): string[] {
  return ["drop table vehicle_positions", "drop function maintain_vehicle_position_partitions(integer, integer)"];
}

/**
 * Whether vehicle_positions is a TimescaleDB hypertable: asked of TimescaleDB's own catalog view,
 * which exists only where the extension is installed.
 */
export async function isHypertable(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ installed: boolean }>`
    select exists (select 1 from pg_extension where extname = 'timescaledb') as installed
  `.execute(db);
  if (!rows[0]?.installed) return false;
  const found = await sql<{ hypertable: boolean }>`
    select exists (
      select 1 from timescaledb_information.hypertables
      where hypertable_schema = current_schema() and hypertable_name = 'vehicle_positions'
    ) as hypertable
  `.execute(db);
  return found.rows[0]?.hypertable ?? false;
}

/** The native path: a table partitioned by range of recorded_at, one partition per UTC day. */
export function nativeStatements(
  retentionDays = DEFAULT_RETENTION_DAYS,
  aheadDays = DEFAULT_PARTITIONS_AHEAD_DAYS,
): string[] {
  return [
    tableStatement(true),
    ROUND_INDEX_STATEMENT,
    MAINTENANCE_FUNCTION,
    `select maintain_vehicle_position_partitions(${retentionDays}, ${aheadDays})`,
  ];
}

/**
 * Creates the daily partitions from the oldest day still kept to `ahead_days` after today and
 * drops those wholly older than the retention (plus a day, so no accepted timestamp ever lacks
 * its partition). An advisory lock keeps replicas from racing; a lock timeout keeps it from
 * stalling inserts when a long transaction holds the table. Returns what it changed.
 */
const MAINTENANCE_FUNCTION = `
  create or replace function maintain_vehicle_position_partitions(retention_days integer, ahead_days integer)
  returns text[] language plpgsql set search_path from current as $fn$
  declare
    today date := (now() at time zone 'utc')::date;
    day date;
    part_name text;
    changes text[] := '{}';
  begin
    perform pg_advisory_xact_lock(hashtext('vehicle_positions partition maintenance'));
    perform set_config('lock_timeout', '5s', true);
    for day in select d::date from generate_series(today - retention_days, today + ahead_days, interval '1 day') d loop
      part_name := 'vehicle_positions_p' || to_char(day, 'YYYYMMDD');
      if to_regclass(part_name) is null then
        execute format('create table %I partition of vehicle_positions for values from (%L) to (%L)',
          part_name, day::text || ' 00:00:00+00', (day + 1)::text || ' 00:00:00+00');
        changes := changes || ('created ' || part_name);
      end if;
    end loop;
    for part_name in
      select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'vehicle_positions'::regclass and c.relname ~ '^vehicle_positions_p[0-9]{8}$'
      order by c.relname
    loop
      if to_date(right(part_name, 8), 'YYYYMMDD') < today - retention_days - 1 then
        execute format('drop table %I', part_name);
        changes := changes || ('dropped ' || part_name);
      end if;
    end loop;
    return changes;
  end
  $fn$`;
