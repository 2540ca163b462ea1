/** Every answer is nosniff; every HTML page gets the page policy unless its route chose its own. */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { PAGE_CSP } from "./security-headers.ts";

const logger = createLogger("headers-test", "silent");
const { app } = createHttpApp({ service: "headers-test", logger, lifecycle: createLifecycle(logger), checks: {} });
app.get("/page", (_request, reply) => reply.type("text/html; charset=utf-8").send("<!doctype html><p>hi</p>"));
app.get("/strict-page", (_request, reply) =>
  reply.type("text/html").header("content-security-policy", "default-src 'none'").send("<p>strict</p>"),
);
app.get("/thing", async () => ({ ok: true }));
before(() => app.ready());
after(() => app.close());

test("an HTML page carries the page policy, no-referrer and nosniff", async () => {
  const response = await app.inject({ method: "GET", url: "/page" });
  assert.equal(response.headers["content-security-policy"], PAGE_CSP);
  assert.match(PAGE_CSP, /frame-ancestors 'none'/);
  assert.doesNotMatch(PAGE_CSP, /unsafe-inline|unsafe-eval/);
  assert.equal(response.headers["referrer-policy"], "no-referrer");
  assert.equal(response.headers["x-content-type-options"], "nosniff");
});

test("a page whose route set its own policy keeps it", async () => {
  const response = await app.inject({ method: "GET", url: "/strict-page" });
  assert.equal(response.headers["content-security-policy"], "default-src 'none'");
});

test("JSON answers, errors and probes included, carry nosniff and no page policy", async () => {
  for (const url of ["/thing", "/nowhere", "/livez"]) {
    const response = await app.inject({ method: "GET", url });
    assert.equal(response.headers["x-content-type-options"], "nosniff", url);
    assert.equal(response.headers["content-security-policy"], undefined, url);
  }
});
