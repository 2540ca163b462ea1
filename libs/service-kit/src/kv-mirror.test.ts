/**
 * The KV mirror over the machine's NATS: the content at start is loaded before start() resolves,
 * updates and deletes follow, a cut connection (a TCP proxy, so the server keeps running) keeps
 * what was read and misses nothing written meanwhile, and stop() ends the watch at once.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type KV, Kvm, type KvWatchEntry } from "@nats-io/kv";
import { createKvMirror, type KvMirror } from "./kv-mirror.ts";
import { createLogger } from "./logger.ts";
import { connectNats, type NatsHandle } from "./nats.ts";
import { cutAndWaitDown, randomNamespace, startProxyTo, type TcpProxy, testInfra, waitFor } from "./testing.ts";

const logger = createLogger("kv-mirror-test", process.env.TEST_LOG_LEVEL ?? "silent");
const bucket = `${randomNamespace().toUpperCase()}_MIRROR`;
let direct: NatsHandle;
let proxied: NatsHandle;
let proxy: TcpProxy;
let kv: KV;
const mirrors: KvMirror[] = [];

before(async () => {
  proxy = await startProxyTo(testInfra().natsUrl);
  direct = await connectNats(testInfra().natsUrl, "kv-mirror-test", logger);
  proxied = await connectNats(proxy.url("nats"), "kv-mirror-test-proxied", logger);
  kv = await new Kvm(direct.nc).create(bucket, { history: 1 });
});

after(async () => {
  for (const mirror of mirrors) await mirror.stop();
  await kv.destroy().catch(() => false);
  await proxied?.nc.close();
  await direct?.drain();
  await proxy?.close();
});

/** A mirror of the bucket into a map, as a holder writes it. */
function mirrorInto(nc: NatsHandle["nc"]) {
  const values = new Map<string, string>();
  let loadedWith = -1;
  const mirror = createKvMirror({
    nc,
    bucket,
    logger,
    label: "test bucket",
    retryMs: 50,
    apply(entry: KvWatchEntry) {
      if (entry.operation === "PUT") values.set(entry.key, entry.string());
      else values.delete(entry.key);
    },
    clear: () => values.clear(),
    onLoaded: () => {
      loadedWith = values.size;
    },
  });
  mirrors.push(mirror);
  return { mirror, values, loadedWith: () => loadedWith };
}

test("an empty bucket is loaded at once", async () => {
  const empty = `${bucket}_EMPTY`;
  const emptyKv = await new Kvm(direct.nc).create(empty);
  try {
    const mirror = createKvMirror({ nc: direct.nc, bucket: empty, logger, label: "empty", apply() {}, clear() {} });
    await mirror.start();
    assert.equal(mirror.loaded, true);
    await mirror.check();
    await mirror.stop();
  } finally {
    await emptyKv.destroy();
  }
});

test("the content at start is loaded before start() resolves, then updates follow", async () => {
  for (let n = 0; n < 50; n++) await kv.put(`k${n}`, `v${n}`);
  const { mirror, values, loadedWith } = mirrorInto(direct.nc);
  assert.equal(mirror.loaded, false);
  await assert.rejects(mirror.check(), /still loading/);
  await mirror.start();
  assert.equal(mirror.loaded, true);
  assert.equal(loadedWith(), 50);
  assert.equal(values.get("k7"), "v7");

  const revision = await kv.put("k7", "seven");
  await kv.delete("k8");
  await waitFor(async () => mirror.revision > revision, 5000, "the delete mirrored");
  assert.equal(values.get("k7"), "seven");
  assert.equal(values.has("k8"), false);
  await mirror.check();
});

test("a cut connection keeps what was read, and what was written meanwhile arrives after", async () => {
  const { mirror, values } = mirrorInto(proxied.nc);
  await mirror.start();
  const before = values.size;
  await cutAndWaitDown(proxy, proxied);
  await kv.put("during-outage", "written");
  await kv.delete("k1");
  assert.equal(values.size, before, "what was read stays while NATS is away");
  await proxy.restore();
  await waitFor(async () => values.get("during-outage") === "written" && !values.has("k1"), 15_000, "catching up");
  await waitFor(async () => mirror.check().then(() => true), 5000, "the watch back up");
});

test("stop() ends the watch at once, and no update is applied after it", async () => {
  const { mirror, values } = mirrorInto(direct.nc);
  await mirror.start();
  const started = performance.now();
  await mirror.stop();
  assert.ok(performance.now() - started < 1000);
  assert.equal(mirror.watching, false);
  await kv.put("after-stop", "x");
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(values.has("after-stop"), false);
});
