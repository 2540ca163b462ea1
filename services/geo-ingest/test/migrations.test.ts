import assert from "node:assert/strict";
import { testMigrations } from "@dos/service-kit/testing-migrations";
import { sql } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";

// The migration logs the storage mode it picks; tests keep their output to test results.
process.env.LOG_LEVEL ??= "silent";

testMigrations({
  label: "geo_migrations",
  schema: SCHEMA,
  migrations,
  folder: new URL("../migrations/", import.meta.url),
  rows: "positions in several partitions",
  seed: async (db) => {
    await sql`
      insert into vehicle_positions (vehicle_external_id, recorded_at, received_at, round_id, provider, latitude, longitude)
      select 'van-1', now() - day * interval '1 day', now(), 100, 'test', 48.85, 2.35 from generate_series(0, 5) day
    `.execute(db);
    const { rows } = await sql<{ partitions: number }>`
      select count(distinct tableoid)::int as partitions from vehicle_positions
    `.execute(db);
    assert.equal(rows[0]?.partitions, 6);
  },
  objects: ["relation | vehicle_positions | p |", "function | CREATE OR REPLACE FUNCTION geo.maintain"],
});
