import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";

describe("request loggers (built only when a line is written)", () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level: "info", base: { service: "log-test" } }, sink);
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
