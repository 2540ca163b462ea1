/**
 * The domain metrics of deploy/README.md's contract, scraped from each running service's
 * /metrics while the matching action happens: a create counts once and its event leaves the
 * outbox, positions count by outcome and are written, webhook attempts count by outcome (a
 * failing receiver until the message is dead-lettered), a quote is timed.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Delivery } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../src/client.ts";
import { type Operator, operator } from "../src/operator.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";
import { registerReceiver, startWebhookReceiver, type WebhookReceiver } from "../src/webhook-receiver.ts";

let system: SystemUnderTest;
let account: SeededAccount;
let receiver: WebhookReceiver;
let fleet: Operator;
let api: string;

before(async () => {
  system = await bootSystemUnderTest({
    // Two attempts, 100 ms apart: a failing receiver dead-letters a message within the test.
    WEBHOOKS_RETRY_SCHEDULE: "0,100ms",
    WEBHOOKS_RETRY_JITTER: "0",
    WEBHOOKS_STATS_INTERVAL_MS: "200",
  });
  [account] = seedAccounts(system) as [SeededAccount];
  api = system.url("delivery-api");
  fleet = operator(system.opsUrl, system.url("geo-ingest"));
  receiver = await startWebhookReceiver();
  await registerReceiver(api, clientHeaders(account), receiver);
});
after(async () => {
  await receiver?.close();
  await system?.teardown();
});

type Service = "delivery-api" | "geo-ingest" | "pricing" | "webhook-dispatcher";

/** The sum of the samples of `name` whose labels include `labels` (0 when there is none). */
async function metric(service: Service, name: string, labels: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${system.url(service)}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  let sum = 0;
  let found = false;
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const sampleLabels = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => sampleLabels[key] === value)) {
      sum += Number(match[3]);
      found = true;
    }
  }
  // A labelled metric shows no sample before its first increment, but is declared.
  const base = name.replace(/_(count|sum|bucket)$/, "");
  assert.ok(found || text.includes(`# TYPE ${base} `), `${service} exports ${name}`);
  return sum;
}

const client = (method: string, path: string, body?: unknown) =>
  call(`${api}/api/v2${path}`, method, clientHeaders(account), body);

async function createDelivery(reference: string): Promise<Delivery> {
  const created = await client("POST", "/deliveries", outboundDelivery(account, reference));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body as Delivery;
}

describe("domain metrics move with the actions they count", () => {
  test("delivery-api: a create counts once in deliveries_created_total and its event leaves the outbox", async () => {
    const before = await metric("delivery-api", "deliveries_created_total");
    await createDelivery("metrics-1");
    assert.equal(await metric("delivery-api", "deliveries_created_total"), before + 1);
    // A refused create counts nothing.
    const refused = await client("POST", "/deliveries", { packages: [] });
    assert.equal(refused.status, 422);
    assert.equal(await metric("delivery-api", "deliveries_created_total"), before + 1);
    await waitFor(async () => (await metric("delivery-api", "outbox_backlog")) === 0, 10_000);
    assert.equal(await metric("delivery-api", "outbox_oldest_age_seconds"), 0);
  });

  test("pricing: a quote is timed in pricing_quote_duration_seconds", async () => {
    const before = await metric("pricing", "pricing_quote_duration_seconds_count");
    const quoted = await client("POST", "/deliveries/quote", outboundDelivery(account, "metrics-quote"));
    assert.equal(quoted.status, 200, JSON.stringify(quoted.body));
    assert.equal(await metric("pricing", "pricing_quote_duration_seconds_count"), before + 1);
    assert.equal(
      await metric("pricing", "pricing_quotes_total", { outcome: "priced" }),
      await metric("pricing", "pricing_quote_duration_seconds_count", { outcome: "priced" }),
    );
  });

  test("geo-ingest: positions count as accepted, rate-limited and inactive; accepted ones are written", async () => {
    const delivery = await createDelivery("metrics-round");
    const active = await metric("geo-ingest", "geo_fleet_active_vehicles");
    const round = await fleet.startRound([delivery.id]);
    // geo-ingest learns of the round through the FLEET bucket; until then the vehicle is inactive.
    await waitFor(async () => (await metric("geo-ingest", "geo_fleet_active_vehicles")) > active, 10_000);
    const outcome = (name: string) => metric("geo-ingest", "geo_positions_total", { outcome: name });
    const [accepted, limited, inactive, written, batches] = await Promise.all([
      outcome("accepted"),
      outcome("rate_limited"),
      outcome("inactive"),
      metric("geo-ingest", "geo_positions_written_total"),
      metric("geo-ingest", "geo_write_batch_rows_count"),
    ]);

    const at = new Date(Date.now() - 5_000);
    assert.equal(await fleet.position(round.vehicle, 48.8566, 2.3522, at), 200);
    assert.equal(await outcome("accepted"), accepted + 1);
    await waitFor(async () => (await metric("geo-ingest", "geo_positions_written_total")) === written + 1, 10_000);
    assert.ok((await metric("geo-ingest", "geo_write_batch_rows_count")) > batches);

    // The same tracker again within its second: 429.
    const again = await call(
      `${system.url("geo-ingest")}/external/vehicles/${encodeURIComponent(round.vehicle.externalId)}/geolocations`,
      "POST",
      {},
      { latitude: 48.857, longitude: 2.353, provider: round.vehicle.provider, timestamp: new Date().toISOString() },
    );
    assert.equal(again.status, 429);
    assert.equal(await outcome("rate_limited"), limited + 1);

    // A vehicle in no active round: answered 200, stored nothing.
    const idle = { externalId: `E2E-IDLE-${Date.now()}`, provider: "e2e-tracker" };
    await fleet.ops("POST", "/vehicles", { external_id: idle.externalId, provider: idle.provider });
    assert.equal(await fleet.position(idle, 48.85, 2.35, new Date()), 200);
    assert.equal(await outcome("inactive"), inactive + 1);
    assert.equal(await metric("geo-ingest", "geo_positions_written_total"), written + 1);
  });

  test("webhook-dispatcher: attempts count by outcome, a message out of attempts is a dead letter", async () => {
    const delivered = await metric("webhook-dispatcher", "webhook_attempts_total", { outcome: "delivered" });
    const delivery = await createDelivery("metrics-webhook");
    await waitFor(async () => receiver.received.some((r) => r.event.delivery_id === delivery.id), 15_000);
    await waitFor(
      async () => (await metric("webhook-dispatcher", "webhook_attempts_total", { outcome: "delivered" })) > delivered,
      10_000,
    );
    // Every event taken in: the consumer has nothing pending (the gauge is measured every 200 ms).
    await waitFor(async () => (await metric("webhook-dispatcher", "webhook_consumer_pending_messages")) === 0, 10_000);

    const retrying = await metric("webhook-dispatcher", "webhook_attempts_total", { outcome: "retrying" });
    const dead = await metric("webhook-dispatcher", "webhook_dead_letters_total");
    receiver.failWith(500);
    try {
      await createDelivery("metrics-webhook-failing");
      // Other events still in flight may fail too: at least this one is counted.
      await waitFor(async () => (await metric("webhook-dispatcher", "webhook_dead_letters_total")) >= dead + 1, 15_000);
      assert.ok(
        (await metric("webhook-dispatcher", "webhook_attempts_total", { outcome: "retrying" })) >= retrying + 1,
      );
      assert.ok((await metric("webhook-dispatcher", "webhook_attempts_total", { outcome: "dead_lettered" })) >= 1);
    } finally {
      receiver.failWith(null);
    }
  });

  test("every service measures its PostgreSQL connections at each scrape", async () => {
    for (const service of ["delivery-api", "geo-ingest", "pricing", "webhook-dispatcher"] as const) {
      const inUse = await metric(service, "db_connections_in_use");
      assert.ok(inUse >= 0 && inUse <= 10, `${service}: ${inUse} in use`);
      // Quiet between the tests: nothing waits.
      assert.equal(await metric(service, "db_connection_waiters"), 0, service);
      assert.equal(await metric(service, "db_connection_tenants_waiting"), 0, service);
    }
  });
});
