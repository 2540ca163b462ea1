/**
 * The storage modes' migration. This machine's PostgreSQL has no TimescaleDB, so the migration
 * must pick native partitioning, say so, and keep partitions within the retention; the
 * hypertable path is checked for the TimescaleDB calls it makes.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createDatabase, createLogger, type Database, migrate } from "@dos/service-kit";
import type { TestDatabase } from "@dos/service-kit/testing";
import { sql } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";
import { insertPositions } from "../src/positions/positions.repository.ts";
import { createStorageMaintenance } from "../src/storage/storage-maintenance.ts";
import {
  detectStorageMode,
  isHypertable,
  nativeDownStatements,
  nativeStatements,
  storageModeOf,
  tableStatement,
  timescaleDownStatements,
  timescaleStatements,
  timescaleVersionSupported,
} from "../src/storage/storage-mode.ts";
import { migratedDatabase } from "./harness.ts";

const DAY_MS = 86_400_000;
const partitionName = (offsetDays: number) =>
  `vehicle_positions_p${new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "")}`;

describe("native partitioning on plain PostgreSQL", () => {
  let testDatabase: TestDatabase;
  let database: Database<unknown>;
  const logger = createLogger("geo-ingest", "silent");

  const partitions = async () => {
    const { rows } = await database.pool.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'vehicle_positions'::regclass order by 1`,
    );
    return rows.map((row) => row.name);
  };

  before(async () => {
    testDatabase = await migratedDatabase("geo_storage");
    database = createDatabase({ url: testDatabase.url, schema: SCHEMA, applicationName: "geo-ingest-test" });
  });
  after(async () => {
    await database.close();
    await testDatabase.drop();
  });

  test("the migration detects that TimescaleDB is missing, picks native partitioning and says so", async () => {
    assert.deepEqual(await detectStorageMode(database.db), {
      mode: "native",
      reason: "the timescaledb extension is not available",
    });
    assert.equal(await storageModeOf(database.db), "native");
    const { rows } = await database.pool.query<{ comment: string }>(
      "select obj_description('vehicle_positions'::regclass, 'pg_class') as comment",
    );
    assert.equal(
      rows[0]?.comment,
      "storage: native partitioning by day (maintain_vehicle_position_partitions); the timescaledb extension is not available",
    );
  });

  test("daily partitions cover the retention (30 days) and three days ahead", async () => {
    const names = await partitions();
    assert.equal(names.length, 34);
    assert.equal(names[0], partitionName(-30));
    assert.equal(names.at(-1), partitionName(3));
  });

  test("a position lands in its day's partition, through the one write path of both modes", async () => {
    const now = Date.now();
    const row = {
      vehicleExternalId: "VAN-P",
      receivedMs: now,
      roundId: 1,
      provider: "p",
      trackerId: null,
      serverStamped: false,
      latitude: 1,
      longitude: 2,
    };
    assert.equal(await insertPositions(database.pool, [{ ...row, recordedMs: now - 2 * DAY_MS }]), 1);
    assert.equal(await insertPositions(database.pool, [{ ...row, recordedMs: now - 2 * DAY_MS }]), 0);
    const { rows } = await database.pool.query<{ partition: string }>(
      "select tableoid::regclass::text as partition from vehicle_positions where vehicle_external_id = 'VAN-P'",
    );
    assert.deepEqual(
      rows.map((r) => r.partition),
      [partitionName(-2)],
    );
  });

  test("maintenance creates partitions ahead and drops those past the retention", async () => {
    for (const offset of [-45, -32, -31]) {
      const day = new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);
      const next = new Date(Date.now() + (offset + 1) * DAY_MS).toISOString().slice(0, 10);
      await sql
        .raw(
          `create table ${partitionName(offset)} partition of vehicle_positions for values from ('${day} 00:00:00+00') to ('${next} 00:00:00+00')`,
        )
        .execute(database.db);
    }
    const maintenance = await createStorageMaintenance(database.db, logger, {
      retentionDays: 30,
      aheadDays: 5,
      intervalMs: 60_000,
    });
    assert.equal(maintenance.mode, "native");
    await maintenance.runOnce();
    const names = await partitions();
    assert.ok(!names.includes(partitionName(-45)));
    assert.ok(!names.includes(partitionName(-32)));
    // The day just past the retention stays a day longer: an accepted timestamp always has a partition.
    assert.equal(names[0], partitionName(-31));
    assert.equal(names.at(-1), partitionName(5));
    assert.equal(names.length, 37);
  });

  test("the migration goes down, leaving nothing of its own, and up again", async () => {
    assert.equal(await isHypertable(database.db), false);
    await migrate(database.db, { schema: SCHEMA, migrations, direction: "down" });
    const { rows } = await database.pool.query(
      `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1
       union all
       select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1`,
      [SCHEMA],
    );
    // Partitions, indexes, the maintenance function: all gone with the table (the migrator's own
    // bookkeeping tables aside).
    assert.deepEqual(
      rows.map((row) => row.relname).filter((name) => !name.startsWith("kysely_migration")),
      [],
    );
    await migrate(database.db, { schema: SCHEMA, migrations });
    assert.equal((await partitions()).length, 34);
  });
});

describe("TimescaleDB hypertable path", () => {
  test("uses TimescaleDB's documented API: hypertable, compression and retention policies", () => {
    const statements = timescaleStatements(30).map((s) => s.replace(/\s+/g, " ").trim());
    assert.deepEqual(statements, [
      "create extension if not exists timescaledb with schema public",
      tableStatement(false).replace(/\s+/g, " ").trim(),
      "create index vehicle_positions_round_time_idx on vehicle_positions (round_id, recorded_at)",
      "select public.create_hypertable('vehicle_positions', public.by_range('recorded_at', interval '1 day'), create_default_indexes => false)",
      "alter table vehicle_positions set ( timescaledb.compress, timescaledb.compress_segmentby = 'vehicle_external_id', timescaledb.compress_orderby = 'recorded_at desc' )",
      "select public.add_compression_policy('vehicle_positions', compress_after => interval '2 days')",
      "select public.add_retention_policy('vehicle_positions', drop_after => interval '30 days')",
    ]);
  });

  test("goes down through TimescaleDB's documented calls: jobs removed, chunks decompressed, compression off, then the drop", () => {
    assert.deepEqual(timescaleDownStatements(), [
      "select public.remove_retention_policy('vehicle_positions', if_exists => true)",
      "select public.remove_compression_policy('vehicle_positions', if_exists => true)",
      "select public.decompress_chunk(c, true) from public.show_chunks('vehicle_positions') c",
      "alter table vehicle_positions set (timescaledb.compress = false)",
      "drop table vehicle_positions",
    ]);
    // The native path drops only what its own up created.
    assert.deepEqual(nativeDownStatements(), [
      "drop table vehicle_positions",
      "drop function maintain_vehicle_position_partitions(integer, integer)",
    ]);
  });

  test("a TimescaleDB older than 2.13 (no by_range) is not used: the table is partitioned natively", () => {
    for (const version of ["2.13.0", "2.13.1-dev", "2.28.1", "2.30.1", "3.0.0"]) {
      assert.equal(timescaleVersionSupported(version), true, version);
    }
    for (const version of ["2.12.2", "2.9.3", "1.7.5", ""])
      assert.equal(timescaleVersionSupported(version), false, version);
  });

  test("both modes create the same table but for the partition clause, so one code path reads and writes", () => {
    const native = nativeStatements()[0] ?? "";
    assert.equal(native, `${tableStatement(false)} partition by range (recorded_at)`);
    assert.match(tableStatement(false), /unique \(vehicle_external_id, recorded_at\)/);
  });
});
