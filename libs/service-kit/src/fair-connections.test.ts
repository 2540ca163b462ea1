import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { createDatabase, type Database } from "./db.ts";
import { isDependencyDown } from "./dependency-errors.ts";
import { runAsTenant } from "./fair-connections.ts";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { testInfra } from "./testing.ts";

const sleepQuery = (database: Database<unknown>, seconds: number) =>
  sql`select pg_sleep(${seconds})`.execute(database.db);

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

describe("PostgreSQL connections are handed out in turn between tenants", () => {
  let database: Database<unknown>;
  before(() => {
    database = createDatabase({
      url: testInfra().databaseUrl,
      schema: "public",
      applicationName: "fair-connections-test",
      poolSize: 4,
    });
  });
  after(() => database.close());

  test("one tenant's burst of 40 queries does not queue another tenant's query behind it; a scrape shows the burst waiting", async () => {
    const burst = runAsTenant("account:1", () =>
      timed(() => Promise.all(Array.from({ length: 40 }, () => sleepQuery(database, 0.05)))),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    // What a scrape shows meanwhile: every connection in use, one tenant with the rest waiting.
    const logger = createLogger("fair-connections-test", "warn");
    const { app } = createHttpApp({
      service: "fair-connections-test",
      logger,
      lifecycle: createLifecycle(logger),
      checks: {},
      database,
    });
    const scrape = (await app.inject({ method: "GET", url: "/metrics" })).body;
    await app.close();
    const gauge = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, "m").exec(scrape)?.[1]);
    assert.equal(gauge("db_connections_in_use"), 4, scrape);
    assert.ok(gauge("db_connection_waiters") >= 30, `${gauge("db_connection_waiters")} waiting`);
    assert.equal(gauge("db_connection_tenants_waiting"), 1);
    const other = await runAsTenant("account:2", () => timed(() => sql`select 1`.execute(database.db)));
    const burstMs = await burst;
    // 40 queries of 50 ms on 4 connections: 500 ms at least. In order of asking, the other
    // tenant's query would have waited for most of them.
    assert.ok(burstMs >= 500, `the burst took ${burstMs.toFixed(0)} ms`);
    assert.ok(other < 150, `the other tenant's query took ${other.toFixed(0)} ms beside the burst`);
  });

  test("a tenant waits its turn among its own queries, and work outside any tenant is served too", async () => {
    const order: string[] = [];
    const run = (tenant: string | undefined, name: string) => {
      const query = async () => {
        await sleepQuery(database, 0.03);
        order.push(name);
      };
      return tenant === undefined ? query() : runAsTenant(tenant, query);
    };
    const all = [
      ...Array.from({ length: 8 }, (_, n) => run("account:1", `a${n}`)),
      run(undefined, "background"),
      run("account:2", "b"),
    ];
    await Promise.all(all);
    // Four start at once (a0-a3); the next four turns go to account 1, the work outside any
    // tenant, account 2, then account 1 again. In order of asking, both would come last.
    assert.ok(order.indexOf("background") < 8, order.join(" "));
    assert.ok(order.indexOf("b") < 8, order.join(" "));
  });
});

describe("waiting for a connection", () => {
  test("a wait past the connection timeout fails as a database outage, and the turns stay right", async () => {
    const database = createDatabase({
      url: testInfra().databaseUrl,
      schema: "public",
      applicationName: "fair-connections-test",
      poolSize: 1,
    });
    try {
      const holder = runAsTenant("account:1", () => sleepQuery(database, 3.6));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      const waited = await runAsTenant("account:2", () => sql`select 1`.execute(database.db)).catch(
        (error: unknown) => error,
      );
      const ms = performance.now() - started;
      assert.ok(isDependencyDown(waited), `expected a timeout, got ${String(waited)}`);
      assert.ok(ms >= 2900 && ms < 3500, `failed after ${ms.toFixed(0)} ms`);
      assert.deepEqual(database.connections(), { inUse: 1, waiting: 0, tenantsWaiting: 0 });
      await holder;
      // The timed-out waiter left no trace: the one connection serves the next query at once.
      assert.ok((await timed(() => sql`select 1`.execute(database.db))) < 200);
    } finally {
      await database.close();
    }
  });

  test("a connection that cannot be made gives its turn back", async () => {
    const url = new URL(testInfra().databaseUrl);
    url.port = "1"; // nothing listens there
    const database = createDatabase({
      url: url.toString(),
      schema: "public",
      applicationName: "fair-connections-test",
      poolSize: 1,
    });
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const error = await sql`select 1`
          .execute(database.db)
          .then(() => undefined)
          .catch((e: unknown) => e);
        assert.ok(isDependencyDown(error), `attempt ${attempt}: ${String(error)}`);
      }
    } finally {
      await database.close();
    }
  });
});
