/**
 * The connection timeouts, over real sockets with small configured values: a body or headers
 * trickled a byte at a time are cut off with a 408 in the error shape, a slow but steady client
 * is served, and an idle keep-alive connection is closed.
 */
import assert from "node:assert/strict";
import net, { type AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";

const HEADERS_MS = 600;
const REQUEST_MS = 1500;
const KEEP_ALIVE_MS = 700;

describe("connection timeouts", () => {
  const logger = createLogger("timeouts-test", "silent");
  const { app } = createHttpApp({
    service: "timeouts-test",
    logger,
    lifecycle: createLifecycle(logger),
    checks: {},
    timeouts: {
      HTTP_HEADERS_TIMEOUT_MS: HEADERS_MS,
      HTTP_REQUEST_TIMEOUT_MS: REQUEST_MS,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: KEEP_ALIVE_MS,
      HTTP_IDLE_TIMEOUT_MS: 10_000,
    },
  });
  const body = Type.Object({ note: Type.String({ maxLength: 100 }) });
  app.post("/notes", { schema: { body } }, async (request) => request.body);
  let port = 0;
  before(async () => {
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  after(() => app.close());

  /** Opens a connection and collects what the server sends until it closes (or `giveUpMs`). */
  const connect = () => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    const started = performance.now();
    socket.on("data", (chunk) => {
      received += chunk.toString();
    });
    socket.on("error", () => {});
    const closed = new Promise<{ received: string; ms: number }>((resolve) =>
      socket.on("close", () => resolve({ received, ms: performance.now() - started })),
    );
    return { socket, closed, received: () => received };
  };
  const write = (socket: net.Socket, text: string) => {
    if (!socket.destroyed) socket.write(text);
  };

  test("a body trickled a byte at a time is cut off with a 408 once the request timeout passes", async () => {
    const payload = JSON.stringify({ note: "x".repeat(60) });
    const { socket, closed } = connect();
    write(
      socket,
      `POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`,
    );
    let sent = 0;
    const trickle = setInterval(() => write(socket, payload[sent++] ?? ""), 100);
    const { received, ms } = await closed;
    clearInterval(trickle);
    console.log(`trickled body: cut after ${ms.toFixed(0)} ms (${sent} of ${payload.length} bytes sent)`);
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(received.endsWith('{"errors":["request was not received in time"]}'), received);
    assert.ok(sent < payload.length, "the whole body was sent before the cut");
    // The check runs every HEADERS_MS / 4; the rest is margin for a loaded machine.
    assert.ok(ms >= REQUEST_MS - 50 && ms < REQUEST_MS + 3000, `${ms} ms`);
  });

  test("headers trickled a byte at a time are cut off once the headers timeout passes", async () => {
    const head = "GET /livez HTTP/1.1\r\nHost: x\r\nX-Slow: ".concat("y".repeat(100));
    const { socket, closed } = connect();
    let sent = 0;
    const trickle = setInterval(() => write(socket, head[sent++] ?? "y"), 50);
    const { received, ms } = await closed;
    clearInterval(trickle);
    console.log(`trickled headers: cut after ${ms.toFixed(0)} ms`);
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(ms >= HEADERS_MS - 50 && ms < HEADERS_MS + 3000, `${ms} ms`);
  });

  test("a slow but steady client is served, and its idle keep-alive connection is then closed", async () => {
    const payload = JSON.stringify({ note: "slow but steady" });
    const { socket, closed, received } = connect();
    write(socket, "POST /notes HTTP/1.1\r\nHost: x\r\n");
    await sleep(200);
    write(socket, `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`);
    for (const part of [payload.slice(0, 5), payload.slice(5, 12), payload.slice(12)]) {
      await sleep(250);
      write(socket, part);
    }
    const answeredAt = performance.now();
    while (!received().includes("slow but steady") && performance.now() - answeredAt < 5000) await sleep(20);
    assert.match(received(), /^HTTP\/1\.1 200 /);
    assert.ok(received().endsWith(payload), received());
    const { ms } = await closed;
    const idle = performance.now() - answeredAt;
    console.log(
      `slow client served after ${(answeredAt - (performance.now() - ms)).toFixed(0)} ms; idle connection closed ${idle.toFixed(0)} ms after`,
    );
    assert.ok(idle >= KEEP_ALIVE_MS - 100 && idle < KEEP_ALIVE_MS + 3000, `${idle} ms`);
  });
});
