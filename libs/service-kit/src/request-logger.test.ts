import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { captureLogs } from "./testing.ts";

describe("request loggers (built only when a line is written)", () => {
  const { logger, lines } = captureLogs("log-test");
  const { app } = createHttpApp({ service: "log-test", logger, lifecycle: createLifecycle(logger), checks: {} });
  app.get("/chatty", async (request) => {
    request.log.debug("below the level");
    request.log.info({ step: 1 }, "handler line");
    return { ok: true };
  });
  app.get("/quiet", { logLevel: "warn" }, async (request) => {
    request.log.info("below the route's level");
    request.log.warn({ step: 2 }, "route warning");
    return { ok: true };
  });
  app.get("/child", { logLevel: "warn" }, async (request) => {
    request.log.child({ component: "inner" }).warn("from a child");
    return { level: request.log.level };
  });
  before(async () => app.ready());
  after(async () => app.close());

  const linesOf = (requestId: string) => lines.filter((line) => line.request_id === requestId);

  test("lines at the logger's level carry the request id; lower ones are dropped", async () => {
    await app.inject({ method: "GET", url: "/chatty", headers: { "x-request-id": "req-chatty" } });
    const mine = linesOf("req-chatty");
    assert.deepEqual(
      mine.map((line) => line.msg),
      ["handler line", "request completed"],
    );
    assert.equal(mine[0]?.step, 1);
    assert.equal(mine[0]?.service, "log-test");
  });

  test("a route's own level applies: its warnings are written, the access line is not", async () => {
    await app.inject({ method: "GET", url: "/quiet", headers: { "x-request-id": "req-quiet" } });
    assert.deepEqual(
      linesOf("req-quiet").map((line) => [line.msg, line.level]),
      [["route warning", 40]],
    );
  });

  test("a child of the request logger keeps the request id and the route's level", async () => {
    const answer = await app.inject({ method: "GET", url: "/child", headers: { "x-request-id": "req-child" } });
    assert.deepEqual(answer.json(), { level: "warn" });
    assert.deepEqual(
      linesOf("req-child").map((line) => [line.msg, line.component]),
      [["from a child", "inner"]],
    );
  });
});

describe("the access line writes the URL as the service chooses", () => {
  const { logger, lines } = captureLogs("log-test");
  const { app } = createHttpApp({
    service: "log-test",
    logger,
    lifecycle: createLifecycle(logger),
    checks: {},
    loggedUrl: (url) => url.replace(/^\/secret\/[^/?]+/, "/secret/[redacted]"),
  });
  app.get("/secret/:key", async () => ({ ok: true }));
  before(async () => app.ready());
  after(async () => app.close());

  test("a secret in the path never reaches the line; the rest of the URL does", async () => {
    await app.inject({ method: "GET", url: "/secret/s3cr3t-key?x=1", headers: { "x-request-id": "req-secret" } });
    const line = lines.find((l) => l.request_id === "req-secret");
    assert.equal(line?.url, "/secret/[redacted]?x=1");
    assert.ok(!JSON.stringify(lines).includes("s3cr3t-key"));
  });
});
