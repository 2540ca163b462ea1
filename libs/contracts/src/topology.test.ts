import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { natsNames } from "./names.ts";
import { ensureTopology, RATE_LIMIT_STATE_TTL_MS, streamConfigs } from "./topology.ts";

const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const namespace = `t${Math.random().toString(16).slice(2, 10)}`;
let nc: NatsConnection;

before(async () => {
  nc = await connect({ servers: natsUrl });
});
after(async () => {
  const jsm = await jetstreamManager(nc);
  const names = natsNames(namespace);
  for (const stream of [
    names.streams.deliveryEvents,
    names.streams.vehiclePositions,
    `KV_${names.buckets.fleet}`,
    `KV_${names.buckets.tariffs}`,
    `KV_${names.buckets.rateLimits}`,
  ]) {
    await jsm.streams.delete(stream).catch(() => {});
  }
  await nc.drain();
});

test("ensureTopology creates the streams and buckets once, then finds them unchanged", async () => {
  const names = natsNames(namespace);
  const first = await ensureTopology(nc, { namespace });
  assert.deepEqual(
    first.created.sort(),
    [
      names.streams.deliveryEvents,
      names.streams.vehiclePositions,
      `KV_${names.buckets.fleet}`,
      `KV_${names.buckets.tariffs}`,
      `KV_${names.buckets.rateLimits}`,
    ].sort(),
  );
  const jsm = await jetstreamManager(nc);
  const before = await jsm.streams.info(names.streams.deliveryEvents);

  const second = await ensureTopology(nc, { namespace });
  assert.deepEqual(second.created, []);
  assert.deepEqual(second.updated, []);
  assert.equal(second.unchanged.length, 5);
  const rateLimits = await jsm.streams.info(`KV_${names.buckets.rateLimits}`);
  assert.equal(rateLimits.config.storage, "memory", "rate-limit state is kept in memory");
  assert.equal(rateLimits.config.max_age, RATE_LIMIT_STATE_TTL_MS * 1_000_000, "old state expires");
  const afterInfo = await jsm.streams.info(names.streams.deliveryEvents);
  assert.deepEqual(afterInfo.config, before.config);
  assert.equal(afterInfo.created, before.created, "the stream was not re-created");
});

test("ensureTopology updates a stream whose configuration drifted", async () => {
  const names = natsNames(namespace);
  await ensureTopology(nc, { namespace });
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(names.streams.deliveryEvents);
  await jsm.streams.update(names.streams.deliveryEvents, { ...info.config, max_age: 24 * 3600 * 1_000_000_000 });

  const result = await ensureTopology(nc, { namespace });
  assert.deepEqual(result.updated, [names.streams.deliveryEvents]);
  const repaired = await jsm.streams.info(names.streams.deliveryEvents);
  const wanted = streamConfigs({ namespace }).find((s) => s.name === names.streams.deliveryEvents);
  assert.equal(repaired.config.max_age, wanted?.max_age);
});

test("a service updates only the streams it owns; another's drift is left to its owner", async () => {
  const names = natsNames(namespace);
  await ensureTopology(nc, { namespace });
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(names.streams.deliveryEvents);
  const drifted = 24 * 3600 * 1_000_000_000;
  await jsm.streams.update(names.streams.deliveryEvents, { ...info.config, max_age: drifted });

  const geoIngest = await ensureTopology(nc, { namespace, service: "geo-ingest" });
  assert.deepEqual(geoIngest.leftToOwner, [names.streams.deliveryEvents]);
  assert.deepEqual(geoIngest.updated, []);
  assert.equal((await jsm.streams.info(names.streams.deliveryEvents)).config.max_age, drifted);

  const deliveryApi = await ensureTopology(nc, { namespace, service: "delivery-api" });
  assert.deepEqual(deliveryApi.updated, [names.streams.deliveryEvents], "its owner repairs it");
});

test("every stream subject lives under the namespace", () => {
  for (const config of streamConfigs({ namespace })) {
    for (const subject of config.subjects ?? []) assert.ok(subject.startsWith(`${namespace}.`), subject);
    assert.ok(config.name.startsWith(namespace.toUpperCase()), config.name);
  }
});
