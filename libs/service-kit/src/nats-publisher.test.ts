/**
 * connectNats's separate publisher: background publishing gets a connection of its own, which
 * readiness and shutdown treat as part of the service's NATS.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "./logger.ts";
import { connectNats } from "./nats.ts";
import { testInfra } from "./testing.ts";

const logger = createLogger("nats-publisher-test", "silent");

test("without separatePublisher, the publisher is the connection itself", async () => {
  const nats = await connectNats(testInfra().natsUrl, "one-connection", logger);
  try {
    assert.equal(nats.publisher, nats.nc);
  } finally {
    await nats.drain();
  }
});

test("with separatePublisher, publishing goes through a second connection that readiness and drain cover", async () => {
  const nats = await connectNats(testInfra().natsUrl, "two-connections", logger, { separatePublisher: true });
  assert.notEqual(nats.publisher, nats.nc);
  assert.notEqual(nats.publisher.info?.client_id, nats.nc.info?.client_id, "the server sees two clients");
  await nats.check();
  // A subscriber on the main connection receives what the publisher sends: one service, one user.
  const sub = nats.nc.subscribe("nats-publisher-test.hello", { max: 1 });
  await nats.nc.flush();
  nats.publisher.publish("nats-publisher-test.hello", "hi");
  for await (const msg of sub) assert.equal(msg.string(), "hi");

  await nats.publisher.close();
  await assert.rejects(nats.check(), /not connected/, "a closed publisher makes the service not ready");
  await nats.drain();
  assert.ok(nats.nc.isClosed(), "drain closes the main connection too");
});
