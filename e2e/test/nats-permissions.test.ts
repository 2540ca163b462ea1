/**
 * The locked-down bus: the system's own nats-server (src/own-infra.ts startLockedNats, as in every
 * e2e suite) runs with the production authorization generated from libs/contracts
 * (permissions.ts: one user per service). The four services boot with their own users and
 * production NATS names and do their real work — tariffs, quotes, delivery events, webhooks and
 * their replay, fleet, positions — without one refusal in the server's log; a service that
 * publishes, subscribes or manages streams outside its permissions is refused, and so is a
 * connection without credentials.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { inboxPrefix, natsNames, SERVICE_NAMES, type ServiceName, streamConfigs } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, PermissionViolationError } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { call, clientHeaders, opsHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../src/client.ts";
import { GEO_OPS_TOKEN, operator } from "../src/operator.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";
import { registerReceiver, startWebhookReceiver, type WebhookReceiver } from "../src/webhook-receiver.ts";

const names = natsNames(""); // production names: the permissions under test are production's
const services = Object.values(SERVICE_NAMES);

let natsUrl: string;
let system: SystemUnderTest;
/** The harness's user, outside the production users: it reads stream state to check effects. */
let observer: NatsConnection;

before(async () => {
  // This file connects as the services outside their permissions on purpose.
  system = await bootSystemUnderTest({ GEO_OPS_TOKEN }, { refusalsOnPurpose: true });
  natsUrl = system.nats.url;
  assert.equal(system.nats.namespace, "");
  observer = await connect({ servers: natsUrl, ...system.nats.harness });
});
after(async () => {
  await observer?.close();
  await system?.teardown();
});

const password = (service: ServiceName) => system.nats.serviceEnv[service].NATS_PASSWORD;
/** The refusals the server logged (publish, subscribe and authorization violations). */
const refusals = () => system.nats.refusals();

/** A connection as `service`'s production user, collecting the server's permission refusals. */
async function connectAs(service: ServiceName) {
  const nc = await connect({
    servers: natsUrl,
    user: service,
    pass: password(service),
    inboxPrefix: inboxPrefix(service),
  });
  const refused: PermissionViolationError[] = [];
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "error" && status.error instanceof PermissionViolationError) refused.push(status.error);
    }
  })().catch(() => {});
  return { nc, refused };
}

describe("every service under its own NATS user", () => {
  let receiver: WebhookReceiver;
  let account: SeededAccount;
  before(async () => {
    receiver = await startWebhookReceiver();
    [account] = seedAccounts(system) as [SeededAccount];
  });
  after(async () => receiver?.close());

  test("tariffs, quotes, delivery events, webhooks, replay, fleet and positions all work, and the server refused nothing", async () => {
    const api = system.url("delivery-api");
    const headers = clientHeaders(account);
    // delivery-api → pricing (tariffs.create); pricing → TARIFFS bucket and tariffs.changed.
    const tariff = await call(`${system.opsUrl}/ops/v1/accounts/${account.account_id}/tariffs`, "POST", opsHeaders, {
      base_cents: { outbound: 700, inbound: 700, other: 1200 },
      per_package_cents: 50,
    });
    assert.equal(tariff.status, 201, JSON.stringify(tariff.body));
    // delivery-api → webhook-dispatcher (webhooks.endpoints.create).
    const webhook = await registerReceiver(api, headers, receiver);
    // delivery-api → pricing (quote), outbox → DELIVERY_EVENTS → webhook-dispatcher's consumer → POST.
    const created = await call(`${api}/api/v2/deliveries`, "POST", headers, outboundDelivery(account, "perm-1"));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const delivery = created.body as { id: number; price_cents: number };
    assert.equal(delivery.price_cents, 750, "priced by pricing with the tariff just stored");
    await waitFor(async () => receiver.received.some((r) => r.event.delivery_id === delivery.id), 20_000);

    // Replay: webhook-dispatcher reads the account's past events from DELIVERY_EVENTS again.
    const before = receiver.received.length;
    const since = new Date(Date.now() - 60_000).toISOString();
    const replay = await call(`${api}/api/v2/webhooks/${webhook.id}/replay`, "POST", headers, { since });
    assert.ok(replay.status < 300, `replay: ${replay.status} ${JSON.stringify(replay.body)}`);
    await waitFor(async () => receiver.received.length > before, 20_000);
    const attempts = await call(`${api}/api/v2/webhooks/${webhook.id}/attempts`, "GET", headers);
    assert.equal(attempts.status, 200);

    // delivery-api → FLEET; geo-ingest watches it, publishes the position; delivery-api consumes it.
    const fleet = operator(system.opsUrl, system.url("geo-ingest"));
    const round = await fleet.startRound([delivery.id]);
    await fleet.storedPosition(round, 48.8566, 2.3522, new Date());
    const jsm = await jetstreamManager(observer);
    await waitFor(async () => {
      const info = await jsm.consumers.info(names.streams.vehiclePositions, names.consumers.deliveryApiPositions);
      return info.ack_floor.stream_seq >= 1;
    }, 20_000);

    // pricing and webhook-dispatcher answer the services framework's discovery.
    for (const name of [names.services.pricing.name, names.services.webhooks.name]) {
      const info = await observer.request(`$SRV.INFO.${name}`, "", { timeout: 5000 });
      assert.equal(info.json<{ name: string }>().name, name);
    }

    assert.deepEqual(refusals(), [], "the server refused none of the services' traffic");
    for (const running of system.services) assert.equal(running.child.exitCode, null, `${running.spec.name} runs`);
  });
});

describe("outside its permissions, a service is refused", () => {
  const event = "delivery.events.1.1.1.created";

  test("no service but delivery-api may publish a delivery event; geo-ingest's attempt stores nothing", async () => {
    const jsm = await jetstreamManager(observer);
    const stored = async () => (await jsm.streams.info(names.streams.deliveryEvents)).state.messages;
    const count = await stored();
    for (const service of services.filter((s) => s !== SERVICE_NAMES.deliveryApi)) {
      const { nc, refused } = await connectAs(service);
      await assert.rejects(jetstream(nc).publish(event, "{}", { timeout: 2000 }), `${service}: JetStream publish`);
      nc.publish(event, "{}");
      await nc.flush();
      await waitFor(async () => refused.some((e) => e.operation === "publish" && e.subject === event), 5000);
      await nc.close();
    }
    assert.equal(await stored(), count, "DELIVERY_EVENTS holds no forged event");
    assert.ok(
      refusals().some((line) => /Publish Violation/.test(line) && line.includes("geo-ingest") && line.includes(event)),
      "the server logged geo-ingest's attempt",
    );
  });

  test("geo-ingest may neither write the fleet, change a stream it does not own, nor read another service's replies", async () => {
    const { nc, refused } = await connectAs(SERVICE_NAMES.geoIngest);
    nc.publish(`$KV.${names.buckets.fleet}.VAN-1`, "{}");
    const inbox = `${inboxPrefix(SERVICE_NAMES.deliveryApi)}.>`;
    nc.subscribe(inbox);
    await nc.flush();
    const jsm = await jetstreamManager(nc);
    const [deliveryEvents] = streamConfigs();
    await assert.rejects(jsm.streams.update(names.streams.deliveryEvents, { ...deliveryEvents, max_age: 1e9 }));
    await assert.rejects(jsm.streams.purge(names.streams.vehiclePositions), "not even its own stream's data");
    await waitFor(
      async () =>
        refused.some((e) => e.operation === "publish" && e.subject.startsWith("$KV.")) &&
        refused.some((e) => e.operation === "subscription" && e.subject === inbox),
      5000,
    );
    await nc.close();
  });

  test("the console reads the latest positions (the live map) and no other subject", async () => {
    const { nc, refused } = await connectAs(SERVICE_NAMES.console);
    const positions = nc.subscribe(names.subjects.vehiclePositionsAll, { max: 1 });
    const events = names.subjects.deliveryEventsAll;
    nc.subscribe(events);
    await nc.flush();
    observer.publish(names.subjects.vehiclePosition("PERM-VAN"), JSON.stringify({ vehicle_external_id: "PERM-VAN" }));
    for await (const message of positions) assert.equal(message.subject, names.subjects.vehiclePosition("PERM-VAN"));
    await waitFor(async () => refused.some((e) => e.operation === "subscription" && e.subject === events), 5000);
    assert.ok(!refused.some((e) => e.subject === names.subjects.vehiclePositionsAll));
    nc.publish(names.subjects.vehiclePosition("PERM-VAN"), "{}");
    await nc.flush();
    await waitFor(async () => refused.some((e) => e.operation === "publish"), 5000);
    await nc.close();
  });

  test("a connection without credentials, or with another service's password, is refused", async () => {
    await assert.rejects(connect({ servers: natsUrl, reconnect: false }), /Authorization/i);
    await assert.rejects(
      connect({ servers: natsUrl, reconnect: false, user: "geo-ingest", pass: password("delivery-api") }),
      /Authorization/i,
    );
  });
});
