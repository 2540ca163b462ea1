import assert from "node:assert/strict";
import net, { type AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import { unprocessable } from "./errors.ts";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";

describe("the HTTP factory answers every bad request in the error shape", () => {
  const logger = createLogger("http-test", "silent");
  const { app } = createHttpApp({
    service: "http-test",
    logger,
    lifecycle: createLifecycle(logger),
    checks: {},
    bodyLimit: 1024,
  });
  const body = Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 100 }), count: Type.Integer({ minimum: 1 }) },
    { additionalProperties: false },
  );
  app.post("/things", { schema: { body } }, async (request) => ({ received: request.body }));
  app.patch("/things/:id/cancel", async (request) => ({ body: request.body ?? null }));
  const page = Type.Object({
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    q: Type.Optional(Type.String()),
  });
  app.get("/things", { schema: { querystring: page } }, async (request) => ({ query: request.query }));
  app.post("/explode", async () => {
    throw new Error("secret internals at /srv/app.ts:42");
  });
  app.post("/refuse", async () => {
    throw unprocessable("packages contains an unknown package type");
  });
  before(async () => app.ready());
  after(async () => app.close());

  const post = (url: string, payload: string, contentType = "application/json") =>
    app.inject({ method: "POST", url, payload, headers: { "content-type": contentType } });

  test("malformed JSON → 400", async () => {
    const response = await post("/things", '{"name": "a",');
    assert.equal(response.statusCode, 400);
    assert.deepEqual(response.json(), { errors: ["body is not valid JSON"] });
  });

  test("a schema violation → 422 naming each field", async () => {
    const response = await post("/things", JSON.stringify({ name: "", count: "3", extra: 1 }));
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json().errors.sort(), [
      "count must be an integer",
      "extra is not a known field",
      "name must not be blank",
    ]);
  });

  test("a body over the limit → 413", async () => {
    const response = await post("/things", JSON.stringify({ name: "x".repeat(2000), count: 1 }));
    assert.equal(response.statusCode, 413);
    assert.deepEqual(response.json(), { errors: ["body must be at most 1024 bytes"] });
  });

  test("a client that reads only after sending a body far over the limit still gets the 413", async () => {
    // Over a real socket: inject() has no kernel to reset the connection.
    await app.listen({ host: "127.0.0.1", port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const oversized = Buffer.alloc(4_000_000, "x");
    const head = `POST /things HTTP/1.1\r\nHost: x\r\nConnection: close\r\ncontent-type: application/json\r\ncontent-length: ${oversized.length}\r\n\r\n`;
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      const chunks: Buffer[] = [];
      socket.pause();
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", () => {});
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
      socket.write(Buffer.concat([Buffer.from(head), oversized]), () => socket.resume().end());
    });
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /\r\n\r\n\{"errors":\["body must be at most 1024 bytes"\]\}$/);
  });

  test("another content type → 415", async () => {
    const response = await post("/things", "name=a", "application/x-www-form-urlencoded");
    assert.equal(response.statusCode, 415);
    assert.deepEqual(response.json(), { errors: ["Content-Type must be application/json"] });
  });

  test("a text/plain body → 415 too", async () => {
    const response = await post("/things", '{"name":"a","count":1}', "text/plain");
    assert.equal(response.statusCode, 415);
  });

  test("a NUL character in any string → 422 naming the field", async () => {
    const response = await post("/things", JSON.stringify({ name: "a\u0000b", count: 1 }));
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { errors: ["name must not contain the NUL character"] });
  });

  test("an unpaired surrogate escape in a string or a key → 422 naming it, not stored as U+FFFD", async () => {
    const response = await post("/things", '{"name":"a\\ud800b","count":1,"x\\udc00":"y"}');
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), {
      errors: [
        "name must be valid Unicode text (\\ud800 is half of a surrogate pair)",
        "x\\udc00 must be valid Unicode text (\\udc00 is half of a surrogate pair)",
      ],
    });
    // A whole pair is one character (U+1F600) and an escaped one too.
    const paired = await post("/things", '{"name":"\\ud83d\\ude00 😀","count":1}');
    assert.equal(paired.statusCode, 200);
    assert.deepEqual(paired.json(), { received: { name: "😀 😀", count: 1 } });
  });

  test("a number in a query string is read only as written in digits: 0x10, 1e1, 0b11 or ' 1' are refused", async () => {
    const get = (query: string) => app.inject({ method: "GET", url: `/things?${query}` });
    for (const written of ["0x10", "1e1", "0b11", "%201", "1.0", "+1"]) {
      const response = await get(`page=${written}`);
      assert.equal(response.statusCode, 422, written);
      assert.deepEqual(response.json(), { errors: ["querystring.page must be an integer"] }, written);
    }
    assert.deepEqual((await get("page=12&q=0x10")).json(), { query: { page: 12, q: "0x10" } });
    assert.deepEqual((await get("page=0")).json(), { errors: ["querystring.page must be at least 1"] });
  });

  test("a prototype-poisoning body is refused", async () => {
    const response = await post("/things", '{"name":"a","count":1,"__proto__":{"admin":true}}');
    assert.equal(response.statusCode, 400);
  });

  test("an empty JSON body on PATCH is no body, not an error", async () => {
    const response = await app.inject({
      method: "PATCH",
      url: "/things/1/cancel",
      headers: { "content-type": "application/json" },
    });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { body: null });
  });

  test("a domain error keeps its status and messages", async () => {
    const response = await post("/refuse", "{}");
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { errors: ["packages contains an unknown package type"] });
  });

  test("an unexpected error → 500 without internals, with the request id", async () => {
    const response = await app.inject({ method: "POST", url: "/explode", headers: { "x-request-id": "req-123" } });
    assert.equal(response.statusCode, 500);
    assert.equal(response.headers["x-request-id"], "req-123");
    assert.deepEqual(response.json(), { errors: ["internal error; the request id is in the x-request-id header"] });
  });

  test("an unknown route → 404 in the error shape", async () => {
    const response = await app.inject({ method: "GET", url: "/nowhere?x=1" });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(response.json(), { errors: ["route GET /nowhere not found"] });
  });

  test("a path segment that is not valid percent-encoding → 400 in the error shape, with the request id", async () => {
    const response = await app.inject({
      method: "PATCH",
      url: "/things/%ff/cancel",
      headers: { "x-request-id": "r-1" },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.headers["x-request-id"], "r-1");
    assert.deepEqual(response.json(), { errors: ["the URL's path is not valid percent-encoding"] });
  });

  test("a path segment over the router's limit → 414 in the error shape, without echoing it", async () => {
    const response = await app.inject({ method: "PATCH", url: `/things/${"A".repeat(201)}/cancel` });
    assert.equal(response.statusCode, 414);
    assert.deepEqual(response.json(), { errors: ["a path segment is longer than 200 characters"] });
  });
});
