/**
 * The locked-down bus: a nats-server of this test's own (loopback, JetStream in a temp dir) runs
 * with the production authorization generated from libs/contracts (permissions.ts: one user per
 * service). The four services boot with their own users and production NATS names and do their
 * real work — tariffs, quotes, delivery events, webhooks and their replay, fleet, positions —
 * without one refusal in the server's log; a service that publishes, subscribes or manages
 * streams outside its permissions is refused, and so is a connection without credentials.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  inboxPrefix,
  natsNames,
  natsServiceUsers,
  SERVICE_NAMES,
  type ServiceName,
  streamConfigs,
} from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, PermissionViolationError } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { call, clientHeaders, opsHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../src/client.ts";
import { GEO_OPS_TOKEN, operator } from "../src/operator.ts";
import { ownNats } from "../src/own-infra.ts";
import { bootSystemUnderTest, freePortRange, type SystemUnderTest } from "../src/system.ts";
import { registerReceiver, startWebhookReceiver, type WebhookReceiver } from "../src/webhook-receiver.ts";

const names = natsNames(""); // production names: the permissions under test are production's
const services = Object.values(SERVICE_NAMES);
const passwords = Object.fromEntries(services.map((s) => [s, randomBytes(16).toString("hex")])) as Record<
  ServiceName,
  string
>;
/** This test's own observer, outside the production users: it reads stream state to check effects. */
const OBSERVER = { user: "observer", password: randomBytes(16).toString("hex") };

let dir: string;
let natsUrl: string;
let log: string;
let server: ReturnType<typeof ownNats>;
let system: SystemUnderTest;
let observer: NatsConnection;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "dos-nats-permissions-"));
  const port = await freePortRange(1);
  natsUrl = `nats://127.0.0.1:${port}`;
  log = path.join(dir, "nats.log");
  const config = path.join(dir, "auth.conf");
  // nats-server reads JSON as its configuration format.
  const users = [...natsServiceUsers((service) => passwords[service]), { ...OBSERVER }];
  writeFileSync(config, JSON.stringify({ authorization: { users } }, null, 2));
  server = ownNats(path.join(dir, "jetstream"), port, ["-c", config, "-l", log]);
  await server.start();
  observer = await connect({ servers: natsUrl, user: OBSERVER.user, pass: OBSERVER.password });
  system = await bootSystemUnderTest(
    { NATS_NAMESPACE: "", GEO_OPS_TOKEN },
    {
      natsUrl,
      serviceEnv: Object.fromEntries(
        services.map((s) => [s, { NATS_USER: s, NATS_PASSWORD: passwords[s] }]),
      ) as SystemUnderTest["serviceEnv"],
    },
  );
});
after(async () => {
  await system?.teardown();
  await observer?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The refusals the server logged (publish, subscribe and authorization violations). */
const refusals = () =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => /Violation/.test(line));

/** A connection as `service`'s production user, collecting the server's permission refusals. */
async function connectAs(service: ServiceName) {
  const nc = await connect({
    servers: natsUrl,
    user: service,
    pass: passwords[service],
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

  test("a connection without credentials, or with another service's password, is refused", async () => {
    await assert.rejects(connect({ servers: natsUrl, reconnect: false }), /Authorization/i);
    await assert.rejects(
      connect({ servers: natsUrl, reconnect: false, user: "geo-ingest", pass: passwords["delivery-api"] }),
      /Authorization/i,
    );
  });
});
