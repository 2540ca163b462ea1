import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createDatabase, createLogger } from "@dos/service-kit";
import { createTestDatabase, type TestDatabase, waitFor } from "@dos/service-kit/testing";
import { sql } from "kysely";
import { createListenLoop } from "../src/outbox/listen-loop.ts";

const CHANNEL = "listen_loop_test";

describe("the relays' LISTEN loop", () => {
  let testDb: TestDatabase;
  let database: ReturnType<typeof createDatabase>;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  before(async () => {
    testDb = await createTestDatabase("listen_loop");
    database = createDatabase({ url: testDb.url, schema: "public", applicationName: "listen-loop-test", poolSize: 3 });
    process.on("uncaughtException", onUncaught);
  });
  after(async () => {
    process.off("uncaughtException", onUncaught);
    await database.close();
    await testDb.drop();
  });

  const listenerPids = async () => {
    const { rows } = await sql<{ pid: number }>`
      select pid from pg_stat_activity
      where datname = current_database() and query = ${`LISTEN ${CHANNEL}`} and pid <> pg_backend_pid()
    `.execute(database.db);
    return rows.map((row) => row.pid);
  };

  test("a killed LISTEN connection is given back once, the loop listens again, and stop ends cleanly", async () => {
    let passes = 0;
    const loop = createListenLoop({
      pool: database.pool,
      channel: CHANNEL,
      pollMs: 200,
      logger: createLogger("listen-loop-test", "silent"),
      pass: async () => {
        passes++;
      },
    });
    loop.start();
    await waitFor(async () => (await listenerPids()).length === 1, 5000, "the loop to LISTEN");

    // The connection dies under it, as when PostgreSQL restarts or an operator kills it.
    const [pid] = await listenerPids();
    await sql`select pg_terminate_backend(${pid}::int)`.execute(database.db);
    // Polling wakes it and it listens again on another connection; a NOTIFY then wakes a pass.
    const before = passes;
    await waitFor(
      async () => {
        await sql`select pg_notify(${CHANNEL}, '')`.execute(database.db);
        return passes > before && (await listenerPids()).some((p) => p !== pid);
      },
      5000,
      "a pass woken by NOTIFY on a new LISTEN connection",
    );

    await loop.stop();
    await waitFor(async () => (await listenerPids()).length === 0, 5000, "the LISTEN connection closed on stop");
    // Every pooled connection is back: the pool can hand out as many as it holds.
    const clients = await Promise.all([database.pool.connect(), database.pool.connect(), database.pool.connect()]);
    for (const client of clients) client.release();
    // The pool's idle connections die later (a database restart): nothing of the loop may react.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid()`.execute(database.db);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(uncaught, [], "no error escaped (a double release throws from the error handler)");
  });
});
