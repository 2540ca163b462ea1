import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createDatabase, type Database } from "./db.ts";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { connectNats, type NatsHandle } from "./nats.ts";
import { startProxyTo, type TcpProxy, testInfra, waitFor } from "./testing.ts";

describe("readiness follows the dependencies", () => {
  const logger = createLogger("readiness-test", "silent");
  let natsProxy: TcpProxy;
  let pgProxy: TcpProxy;
  let nats: NatsHandle;
  let database: Database<unknown>;
  let lifecycle: ReturnType<typeof createLifecycle>;
  let app: ReturnType<typeof createHttpApp>["app"];

  before(async () => {
    const infra = testInfra();
    natsProxy = await startProxyTo(infra.natsUrl);
    pgProxy = await startProxyTo(infra.databaseUrl);
    const pgUrl = new URL(infra.databaseUrl);
    pgUrl.host = `127.0.0.1:${pgProxy.port}`;
    database = createDatabase({ url: pgUrl.toString(), schema: "public", applicationName: "readiness-test" });
    nats = await connectNats(natsProxy.url("nats"), "readiness-test", logger);
    lifecycle = createLifecycle(logger);
    app = createHttpApp({
      service: "readiness-test",
      logger,
      lifecycle,
      checks: { postgres: database.check, nats: nats.check },
    }).app;
    await app.ready();
  });

  after(async () => {
    await app.close();
    await nats.nc.close();
    await database.close();
    await natsProxy.close();
    await pgProxy.close();
  });

  const readyz = async () => {
    const response = await app.inject({ method: "GET", url: "/readyz" });
    return { status: response.statusCode, body: response.json() };
  };

  test("ready while PostgreSQL and NATS answer", async () => {
    assert.deepEqual(await readyz(), {
      status: 200,
      body: { status: "ready", checks: { postgres: "ok", nats: "ok" } },
    });
  });

  test("503 while NATS is gone, 200 again once it is back, without a restart", async () => {
    await natsProxy.cut();
    const down = await waitFor(
      async () => {
        const r = await readyz();
        return r.status === 503 ? r : undefined;
      },
      10_000,
      "readyz 503",
    );
    assert.equal(down.body.checks.postgres, "ok");
    assert.match(down.body.errors[0], /^nats is unreachable/);
    await natsProxy.restore();
    await waitFor(async () => (await readyz()).status === 200, 15_000, "readyz 200 after NATS is back");
  });

  test("503 while PostgreSQL is gone, 200 again once it is back", async () => {
    await pgProxy.cut();
    const down = await waitFor(
      async () => {
        const r = await readyz();
        return r.status === 503 ? r : undefined;
      },
      10_000,
      "readyz 503",
    );
    assert.match(down.body.checks.postgres, /^is unreachable/);
    assert.equal(down.body.checks.nats, "ok");
    await pgProxy.restore();
    await waitFor(async () => (await readyz()).status === 200, 15_000, "readyz 200 after PostgreSQL is back");
  });

  test("503 from the start of shutdown on, while /livez stays 200", async () => {
    await lifecycle.shutdown("SIGTERM");
    const response = await readyz();
    assert.equal(response.status, 503);
    assert.deepEqual(response.body.errors, ["process shutting down"]);
    assert.equal((await app.inject({ method: "GET", url: "/livez" })).statusCode, 200);
  });
});
