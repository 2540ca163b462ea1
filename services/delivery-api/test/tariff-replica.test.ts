/**
 * The tariff replica and the pricing client's fallback, over real NATS and PostgreSQL with the
 * real pricing service (its own process): a tariff created through pricing reaches the replica;
 * while the client's NATS connection is cut (a TCP proxy, so the machine's server keeps running)
 * the quote comes from the replica and equals pricing's reply; a replica never loaded is a 503;
 * with NATS up, pricing not answering stays a 503 even though the replica could price.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ensureTopology, natsNames, type QuoteRequest, SERVICE_ERROR_HEADERS, type Tariff } from "@dos/contracts";
import { connectNats, createLogger, createMetrics, HttpError, type NatsHandle } from "@dos/service-kit";
import {
  createTestDatabase,
  cutAndWaitDown,
  randomNamespace,
  startProxyTo,
  type TcpProxy,
  type TestDatabase,
  testInfra,
  waitFor,
} from "@dos/service-kit/testing";
import { createPricingClient, type PricingClient } from "../src/pricing/pricing.client.ts";
import { createTariffReplica, type TariffReplica } from "../src/pricing/tariff-replica.ts";

const pricingDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../pricing");
const logger = createLogger("tariff-replica-test", process.env.TEST_LOG_LEVEL ?? "silent");
const namespace = randomNamespace();
const names = natsNames(namespace);
let database: TestDatabase;
let pricing: ChildProcess;
let proxy: TcpProxy;
/** The machine's NATS, straight: pricing's side and the operator's. */
let direct: NatsHandle;
/** delivery-api's connection, through the proxy that the tests cut. */
let proxied: NatsHandle;
let replica: TariffReplica;
let metrics: ReturnType<typeof createMetrics>;
let client: PricingClient;

before(async () => {
  database = await createTestDatabase("tariff_replica");
  const natsUrl = testInfra().natsUrl;
  proxy = await startProxyTo(natsUrl);
  direct = await connectNats(natsUrl, "tariff-replica-test", logger);
  proxied = await connectNats(proxy.url("nats"), "tariff-replica-test-api", logger);
  await ensureTopology(direct.nc, { namespace });

  const env = { ...process.env, DATABASE_URL: database.url, NATS_URL: natsUrl, NATS_NAMESPACE: namespace };
  const migrated = spawn(process.execPath, ["src/migrate.ts"], { cwd: pricingDir, env, stdio: "inherit" });
  assert.equal(await new Promise((resolve) => migrated.on("exit", resolve)), 0, "pricing migrations");
  pricing = spawn(process.execPath, ["src/main.ts"], {
    cwd: pricingDir,
    env: { ...env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error" },
    stdio: "inherit",
  });
  await waitFor(
    async () => (await direct.nc.request(names.services.pricing.quoteSubject, "{}", { timeout: 1000 })) !== undefined,
    20_000,
    "pricing answering",
  );

  replica = createTariffReplica({ nc: proxied.nc, namespace, logger });
  replica.start();
  metrics = createMetrics("delivery-api");
  client = createPricingClient({ nc: proxied.nc, namespace, timeoutMs: 2000, gatherMs: 0, logger, replica, metrics });
});

after(async () => {
  await replica?.stop();
  if (pricing && pricing.exitCode === null) {
    pricing.kill("SIGTERM");
    await new Promise((resolve) => pricing.on("exit", resolve));
  }
  await proxied?.nc.close();
  await direct?.drain();
  await proxy?.close();
  await database?.drop();
});

const HOUR = 3_600_000;
/** Set once the tariff exists: a request before its effective_from has no tariff in force. */
let requestedAt = new Date();

function quoteRequest(accountId: number): QuoteRequest {
  const at = (offset: number) => new Date(requestedAt.getTime() + offset).toISOString();
  return {
    account_id: accountId,
    direction: "outbound",
    // A 45-minute slot 3 hours ahead: slot and lead-time surcharges both apply.
    tasks: [{ kind: "dropoff", slot_starting_at: at(3 * HOUR), slot_ending_at: at(3 * HOUR + 45 * 60_000) }],
    packages: [
      { amount: 2, volume_dm3: 30, weight_kg: 6 },
      { amount: 1, volume_dm3: 12, weight_kg: 1.5 },
    ],
    requested_at: at(0),
  };
}

async function createTariff(body: Record<string, unknown>): Promise<Tariff> {
  const msg = await direct.nc.request(names.subjects.pricingTariffsCreate, JSON.stringify(body), { timeout: 5000 });
  assert.equal(msg.headers?.get(SERVICE_ERROR_HEADERS.code) ?? "", "", msg.string());
  return msg.json<Tariff>();
}

const fromReplicaCount = async () =>
  (await metrics.registry.getSingleMetric("quotes_from_tariff_replica_total")?.get())?.values[0]?.value ?? 0;

async function cutNats() {
  await cutAndWaitDown(proxy, proxied);
}

async function restoreNats() {
  await proxy.restore();
  await waitFor(async () => proxied.check().then(() => true), 10_000, "the connection to come back");
}

test("a tariff created through pricing reaches the replica, which prices exactly as pricing does", async () => {
  const tariff = await createTariff({
    account_id: 41,
    base_cents: { outbound: 900, inbound: 1100, other: 1400 },
    per_package_cents: 100,
    weight_bands: [{ from_kg: 10, cents: 250 }],
    volume_bands: [{ from_dm3: 50, cents: 300 }],
    slot_surcharges: [{ shorter_than_minutes: 60, cents: 500 }],
    lead_time_surcharges: [{ shorter_than_minutes: 240, cents: 600 }],
    minimum_cents: 1000,
  });
  await waitFor(async () => replica.versions(41)[0]?.id === tariff.id, 5000, "the tariff in the replica");
  assert.ok(replica.loaded);
  requestedAt = new Date();

  const fromPricing = await client.quote(quoteRequest(41));
  const noTariff = await client.quote(quoteRequest(42));
  assert.equal(fromPricing.tariff_id, tariff.id);
  assert.equal(fromPricing.price_cents, 900 + 300 + 250 + 300 + 500 + 600);
  assert.deepEqual(noTariff, { price_cents: null, tariff_id: null, lines: [] });
  assert.equal(await fromReplicaCount(), 0, "NATS up: pricing answered");

  await cutNats();
  try {
    assert.deepEqual(await client.quote(quoteRequest(41)), fromPricing);
    assert.deepEqual(await client.quote(quoteRequest(42)), noTariff);
    assert.equal(await fromReplicaCount(), 2);
  } finally {
    await restoreNats();
  }
  assert.deepEqual(await client.quote(quoteRequest(41)), fromPricing);
  assert.equal(await fromReplicaCount(), 2, "NATS back: pricing answers again");
});

test("with NATS down, a replica never loaded is a 503 with Retry-After", async () => {
  const empty = createTariffReplica({ nc: proxied.nc, namespace, logger });
  const unloaded = createPricingClient({
    nc: proxied.nc,
    namespace,
    timeoutMs: 2000,
    gatherMs: 0,
    logger,
    replica: empty,
    metrics: createMetrics("delivery-api"),
  });
  await cutNats();
  try {
    const error = await unloaded.quote(quoteRequest(41)).then(
      () => assert.fail("a quote was returned"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof HttpError);
    assert.equal(error.statusCode, 503);
    assert.deepEqual(error.headers, { "retry-after": "5" });
  } finally {
    await restoreNats();
  }
});

test("with NATS up, pricing not answering stays a 503 even though the replica could price", async () => {
  assert.ok(replica.versions(41).length > 0);
  pricing.kill("SIGTERM");
  await new Promise((resolve) => pricing.on("exit", resolve));
  const error = await client.quote(quoteRequest(41)).then(
    () => assert.fail("a quote was returned"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof HttpError);
  assert.equal(error.statusCode, 503);
  assert.equal(await fromReplicaCount(), 2);
});

test("a request lost with the connection is priced from the replica", async () => {
  // Pricing is gone (previous test); a responder that never answers holds the request open.
  const silent = direct.nc.subscribe(names.services.pricing.quoteSubject, { callback: () => {} });
  await direct.nc.flush();
  try {
    const expected = await client.quote(quoteRequest(41)).catch((e: unknown) => e);
    assert.ok(expected instanceof HttpError, "NATS up and no answer: a 503");
    const pending = client.quote(quoteRequest(41));
    await cutNats();
    const reply = await pending;
    assert.equal(reply.tariff_id, replica.versions(41)[0]?.id);
    assert.equal(reply.price_cents, 900 + 300 + 250 + 300 + 500 + 600);
    assert.equal(await fromReplicaCount(), 3);
  } finally {
    silent.unsubscribe();
    await restoreNats();
  }
});
