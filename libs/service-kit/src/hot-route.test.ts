/**
 * A hot route answers every request exactly as the same route through Fastify does: two apps with
 * the same route and handler, one with the hot path, are sent the same bytes over real sockets,
 * and their answers (status, headers, body) and metrics must be the same. Which path served each
 * request is checked too: plain requests must not reach Fastify in the hot app (else the
 * comparison would prove nothing), every other form must.
 */
import assert from "node:assert/strict";
import net, { type AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import { HttpError, unprocessable } from "./errors.ts";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { captureLogs } from "./testing.ts";

const URL = "/things/:thing_id/readings";
const Reading = Type.Object(
  {
    value: Type.Number({ minimum: -90, maximum: 90 }),
    label: Type.String({ minLength: 1, maxLength: 50 }),
    note: Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Null()])),
  },
  { additionalProperties: false },
);

/** Held requests wait for this gate (opened by the test that holds them); `held` counts them. */
let gate = Promise.resolve();
const held = { count: 0 };

/** The handler both apps share: the thing's id picks what it does. */
async function handle(thing: string, body: { label: string }, token: unknown) {
  if (thing === "held") {
    held.count++;
    await gate;
  }
  if (thing === "unknown") throw new HttpError(404, "thing_id is not a known thing");
  if (thing === "busy") throw new HttpError(429, "too fast; retry later", { "retry-after": "1" });
  if (thing === "down") throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  if (thing === "boom") throw new Error("secret internals at /srv/app.ts:42");
  if (body.label === "refuse") throw unprocessable("label is refused");
  if (thing === "guarded" && token !== "let-me-in") throw new HttpError(401, "X-Token is invalid");
}

function build(hot: boolean, logLevel: string) {
  const { logger, lines } = captureLogs("hot-route-test", "info");
  const lifecycle = createLifecycle(createLogger("hot-route-test", "silent"));
  const http = createHttpApp({ service: "hot-route-test", logger, lifecycle, checks: {}, bodyLimit: 1024 });
  const throughFastify = { count: 0 };
  // onSend: every answer Fastify gives passes there, the router's own refusals (414) included.
  http.app.addHook("onSend", (_request, _reply, payload, done) => {
    throughFastify.count++;
    done(null, payload);
  });
  http.app.post<{ Params: { thing_id: string }; Body: { label: string } }>(
    URL,
    {
      schema: { params: Type.Object({ thing_id: Type.String({ minLength: 1 }) }), body: Reading },
      logLevel: logLevel as "warn",
    },
    async (request, reply) => {
      await handle(request.params.thing_id, request.body, request.headers["x-token"]);
      return reply.code(200).send();
    },
  );
  if (hot) {
    http.hotRoute<{ label: string }>({
      url: URL,
      body: Reading,
      logLevel,
      handle: (thing, body, headers) => handle(thing, body, headers["x-token"]),
    });
  }
  return { ...http, lifecycle, throughFastify, lines };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes on a new keep-alive connection and reads one answer (every answer has a Content-Length). */
function send(port: number, request: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const [statusLine, ...lines] = buffer.subarray(0, end).toString("latin1").split("\r\n");
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
      );
      const length = Number(headers["content-length"]);
      if (buffer.length < end + 4 + length) return;
      socket.destroy();
      resolve({
        status: Number(statusLine?.split(" ")[1]),
        headers,
        body: buffer.subarray(end + 4, end + 4 + length).toString("utf8"),
      });
    });
    socket.on("error", reject);
    socket.write(request);
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The answer as compared: the date and a generated request id differ by nature. */
function comparable(answer: Answer) {
  const { date, "x-request-id": id, ...headers } = answer.headers;
  return { status: answer.status, headers, body: answer.body, id: id && UUID.test(id) ? "<generated>" : id };
}

function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Buffer {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  const head = Object.entries({
    "content-type": "application/json",
    "content-length": String(bytes.length),
    ...headers,
  })
    .filter(([, value]) => value !== "")
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nhost: x\r\n${head}\r\n`, "latin1"), bytes]);
}

const valid = JSON.stringify({ value: 48.8, label: "ok" });

/** Requests the hot path must serve itself. */
const plain: Array<[string, Buffer]> = [
  ["valid", post("/things/T-1/readings", valid)],
  ["valid, charset", post("/things/T-1/readings", valid, { "content-type": "application/json; charset=utf-8" })],
  ["valid, given request id", post("/things/T-1/readings", valid, { "x-request-id": "req-123" })],
  ["bad request id", post("/things/T-1/readings", valid, { "x-request-id": "bad id!" })],
  ["malformed JSON", post("/things/T-1/readings", '{"value": 1,')],
  ["not UTF-8", post("/things/T-1/readings", Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]))],
  ["schema violations", post("/things/T-1/readings", JSON.stringify({ value: "3", extra: 1 }))],
  ["out of range", post("/things/T-1/readings", JSON.stringify({ value: 91, label: "" }))],
  ["a scalar", post("/things/T-1/readings", "42")],
  ["blank body", post("/things/T-1/readings", "   ")],
  ["NUL", post("/things/T-1/readings", JSON.stringify({ value: 1, label: "a\u0000b" }))],
  ["lone surrogate", post("/things/T-1/readings", '{"value": 1, "label": "\\ud800"}')],
  ["deep nesting", post("/things/T-1/readings", `${"[".repeat(40)}${"]".repeat(40)}`)],
  ["prototype poisoning", post("/things/T-1/readings", '{"value": 1, "label": "x", "__proto__": {"a": 1}}')],
  ["handler: unknown", post("/things/unknown/readings", valid)],
  ["handler: 429", post("/things/busy/readings", valid)],
  ["handler: dependency down", post("/things/down/readings", valid)],
  ["handler: crash", post("/things/boom/readings", valid)],
  ["handler: refused", post("/things/T-1/readings", JSON.stringify({ value: 1, label: "refuse" }))],
  ["handler: header", post("/things/guarded/readings", valid, { "x-token": "let-me-in" })],
  ["handler: header wrong", post("/things/guarded/readings", valid, { "x-token": "nope" })],
];

/** Requests handed to Fastify: forms the hot path does not take. */
const delegated: Array<[string, Buffer]> = [
  ["percent-encoded id", post("/things/T%2D1/readings", valid)],
  ["query string", post("/things/T-1/readings?x=1", valid)],
  ["trailing slash", post("/things/T-1/readings/", valid)],
  ["long id", post(`/things/${"A".repeat(201)}/readings`, valid)],
  ["dot id", post("/things/../readings", valid)],
  ["text/plain", post("/things/T-1/readings", valid, { "content-type": "text/plain" })],
  ["no content type", post("/things/T-1/readings", valid, { "content-type": "" })],
  ["over the limit", post("/things/T-1/readings", JSON.stringify({ value: 1, label: "x".repeat(2000) }))],
  ["empty body", post("/things/T-1/readings", "")],
  [
    "chunked",
    Buffer.from(
      `POST /things/T-1/readings HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${valid.length.toString(16)}\r\n${valid}\r\n0\r\n\r\n`,
    ),
  ],
  ["GET", Buffer.from("GET /things/T-1/readings HTTP/1.1\r\nhost: x\r\n\r\n")],
];

/** A log line as compared: what an operator reads, without times and stacks. */
const logged = (line: Record<string, unknown>) => ({
  level: line.level,
  msg: line.msg,
  err: (line.err as { message?: string } | undefined)?.message,
  request: typeof line.request_id === "string",
  answer: [line.method, line.url, line.status],
});

for (const logLevel of ["warn", "info"])
  describe(`a hot route answers as Fastify does (route log level ${logLevel})`, () => {
    const fastify = build(false, logLevel);
    const hot = build(true, logLevel);
    const ports = { fastify: 0, hot: 0 };
    before(async () => {
      for (const [key, app] of [
        ["fastify", fastify],
        ["hot", hot],
      ] as const) {
        await app.app.listen({ host: "127.0.0.1", port: 0 });
        ports[key] = (app.app.server.address() as AddressInfo).port;
      }
    });
    after(async () => {
      await fastify.app.close();
      await hot.app.close();
    });

    const compare = async (label: string, request: Buffer) => {
      const lines = { fastify: fastify.lines.length, hot: hot.lines.length };
      const expected = await send(ports.fastify, request);
      const actual = await send(ports.hot, request);
      assert.deepEqual(comparable(actual), comparable(expected), label);
      // Lines are written as the answer goes: Fastify's access line once it has gone.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        hot.lines.slice(lines.hot).map(logged),
        fastify.lines.slice(lines.fastify).map(logged),
        `${label}: log lines`,
      );
      return actual;
    };

    test("plain requests: the same answers, none through Fastify", async () => {
      const before_ = hot.throughFastify.count;
      const statuses = new Set<number>();
      for (const [label, request] of plain) statuses.add((await compare(label, request)).status);
      assert.equal(hot.throughFastify.count, before_, "plain requests reached Fastify");
      // The list covers every kind of answer: success, client errors, dependency down, crash.
      assert.deepEqual([...statuses].sort(), [200, 400, 401, 404, 422, 429, 500, 503]);
    });

    test("every other form: handed to Fastify, so the same answers", async () => {
      for (const [label, request] of delegated) {
        const before_ = hot.throughFastify.count;
        const answer = await compare(label, request);
        // The router refuses a long segment before any hook runs: only Fastify answers 414.
        if (answer.status === 414) continue;
        assert.equal(hot.throughFastify.count, before_ + 1, `${label} did not go through Fastify`);
      }
    });

    test("the route's duration histogram counts the hot answers in the route's series", async () => {
      const counts = async (app: typeof hot) =>
        (await app.app.inject({ method: "GET", url: "/metrics" })).body
          .split("\n")
          .filter((line) => line.startsWith("http_request_duration_seconds_count") && line.includes(URL))
          .map((line) => line.replace(/ [0-9.e+-]+$/, (value) => ` ${Number(value)}`))
          .sort();
      const expected = await counts(fastify);
      assert.ok(
        expected.some((line) => line.includes('status_code="200"')),
        expected.join("\n"),
      );
      assert.deepEqual(await counts(hot), expected);
    });

    test("at info, every answer of the route writes its access line", () => {
      const lines = hot.lines.filter(
        (line) => line.msg === "request completed" && line.method === "POST" && line.url === "/things/T-1/readings",
      );
      assert.equal(lines.length > 0, logLevel === "info");
    });

    test("from the shutdown on, requests go through Fastify and every answer closes its connection", async () => {
      let open = () => {};
      gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      // Taken by the hot path before the shutdown, answered after it.
      const served = hot.throughFastify.count;
      const heldBefore = held.count;
      const heldAnswer = send(ports.hot, post("/things/held/readings", valid));
      while (held.count === heldBefore) await new Promise((resolve) => setTimeout(resolve, 5));
      void fastify.lifecycle.shutdown("test");
      void hot.lifecycle.shutdown("test");
      open();
      assert.equal((await heldAnswer).headers.connection, "close");
      assert.equal(hot.throughFastify.count, served, "the held request went through Fastify");
      const before_ = hot.throughFastify.count;
      const answer = await compare("valid, shutting down", post("/things/T-1/readings", valid));
      assert.equal(answer.headers.connection, "close");
      assert.equal(hot.throughFastify.count, before_ + 1);
    });
  });
