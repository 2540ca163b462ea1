import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout } from "node:timers/promises";
import pg from "pg";
import { createBackendsMeter } from "./cpu-time.ts";
import { createTestDatabase } from "./testing.ts";

test("the backends meter keeps what a finished backend spent, and adds what a new one spends", async () => {
  const database = await createTestDatabase("cpu_meter");
  const lister = new pg.Client({ connectionString: database.url });
  await lister.connect();
  const meter = createBackendsMeter((text, values) => lister.query<{ pid: number }>(text, values));
  // Enough work to show in /proc's 10 ms ticks whatever the machine.
  const burn = async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query("select count(*) from generate_series(1, 3000000)");
    return client;
  };
  const pidsNow = async () =>
    (
      await lister.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
      )
    ).rows.length;
  try {
    const start = await meter();
    const first = await burn();
    const whileFirst = await meter();
    assert.ok(
      whileFirst.cpuMs - start.cpuMs >= 20,
      `the first backend's work is seen: ${whileFirst.cpuMs - start.cpuMs} ms`,
    );

    await first.end();
    while ((await pidsNow()) > 0) await setTimeout(20);
    const afterFirst = await meter();
    assert.equal(afterFirst.cpuMs, whileFirst.cpuMs, "an ended backend keeps its last reading");

    const second = await burn();
    const whileSecond = await meter();
    await second.end();
    assert.ok(
      whileSecond.cpuMs - afterFirst.cpuMs >= 20,
      `a new backend adds to it: ${whileSecond.cpuMs - afterFirst.cpuMs} ms`,
    );
  } finally {
    await lister.end();
    await database.drop();
  }
});
