/**
 * The operator's webhook routes (/ops/v1/accounts/{id}/webhooks) and CLI commands, against a
 * real webhook-dispatcher and a real receiver: the client's operations for any account, and
 * re-enabling an endpoint the dispatcher disabled.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type InternalListener, listenInternal } from "@dos/service-kit";
import { waitFor } from "@dos/service-kit/testing";
import { makeEvent, type Receiver, startReceiver, type TestDispatcher } from "@dos/webhook-dispatcher/testing";
import { runOpsCli } from "./cli-runner.ts";
import { createTestAccount, startTestApi, type TestAccount, type TestApi, UUID } from "./fixtures.ts";
import { type OpsClient, opsClient, TIMESTAMP } from "./ops-client.ts";
import { startWebhooksTestbed } from "./webhooks-testbed.ts";

const UNKNOWN_ACCOUNT = 999_999_999;

describe("/ops/v1/accounts/{id}/webhooks, forwarded to webhook-dispatcher", () => {
  let api: TestApi;
  let dispatcher: TestDispatcher;
  let receiver: Receiver;
  let ops: OpsClient;
  let shop: TestAccount;
  let other: TestAccount;
  let baseUrl: string;
  let internal: InternalListener;
  let close: () => Promise<void>;

  before(async () => {
    ({ api, dispatcher, receiver, shop, other, close } = await startWebhooksTestbed());
    ops = opsClient(api);
    await api.app.listen({ host: "127.0.0.1", port: 0 });
    // The CLI reaches the operator API where an operator does: on the internal listener.
    internal = await listenInternal(api.app, { host: "127.0.0.1", port: 0 });
    baseUrl = internal.url;
  });
  after(async () => {
    await internal.close();
    await close();
  });

  const hooks = (account: number | string) => `/accounts/${account}/webhooks`;

  test("create, list, rotate, read attempts, replay and delete an account's endpoint", async () => {
    const created = await ops.post(hooks(shop.accountId), { url: receiver.url, events: ["delivery.created"] });
    assert.equal(created.status, 201);
    const webhook = created.body;
    assert.match(webhook.id, UUID);
    assert.match(webhook.secret, /^whsec_/);
    assert.match(webhook.created_at, TIMESTAMP);
    assert.deepEqual([webhook.url, webhook.events, webhook.status], [receiver.url, ["delivery.created"], "enabled"]);
    assert.equal(created.headers.location, `/ops/v1/accounts/${shop.accountId}/webhooks/${webhook.id}`);
    assert.equal(created.headers["cache-control"], "no-store");

    const list = await ops.get(hooks(shop.accountId));
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((w: { id: string }) => w.id),
      [webhook.id],
    );
    assert.ok(!("secret" in list.body[0]), "the secret is never listed");
    assert.deepEqual((await ops.get(hooks(other.accountId))).body, []);
    // The same registry as the client's own routes.
    const clientList = await api.app.inject({ method: "GET", url: "/api/v2/webhooks", headers: shop.headers });
    assert.deepEqual(
      clientList.json().map((w: { id: string }) => w.id),
      [webhook.id],
    );

    const rotated = await ops.post(`${hooks(shop.accountId)}/${webhook.id}/rotate`);
    assert.equal(rotated.status, 200);
    assert.equal(rotated.body.id, webhook.id);
    assert.match(rotated.body.secret, /^whsec_/);
    assert.notEqual(rotated.body.secret, webhook.secret);
    assert.equal(rotated.headers["cache-control"], "no-store");

    const event = makeEvent({ accountId: shop.accountId, deliveryId: 515_151, sequence: 1 });
    await dispatcher.publish(event);
    const [attempt] = await waitFor(async () => {
      const reply = await ops.get(`${hooks(shop.accountId)}/${webhook.id}/attempts?limit=5`);
      return reply.status === 200 && reply.body.length === 1
        ? (reply.body as Array<Record<string, unknown>>)
        : undefined;
    });
    assert.deepEqual([attempt?.event_id, attempt?.status_code, attempt?.outcome], [event.id, 204, "delivered"]);
    assert.equal((await ops.get(`${hooks(shop.accountId)}/${webhook.id}/attempts?limit=0`)).status, 422);

    const since = new Date(Date.now() - 60_000).toISOString();
    const replay = await ops.post(`${hooks(shop.accountId)}/${webhook.id}/replay`, { since });
    assert.equal(replay.status, 202);
    assert.deepEqual(replay.body, { replayed: 1 });
    await waitFor(async () => receiver.received.filter((r) => r.id === event.id).length === 2, 10_000, "replay");

    const deleted = await ops.delete(`${hooks(shop.accountId)}/${webhook.id}`);
    assert.equal(deleted.status, 204);
    assert.deepEqual((await ops.get(hooks(shop.accountId))).body, []);
    const again = await ops.delete(`${hooks(shop.accountId)}/${webhook.id}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, { errors: ["webhook not found"] });
  });

  test("a bad body is a 422 naming the field, as on the client's routes", async () => {
    const refused = await ops.post(hooks(shop.accountId), { url: "ftp://example.com/hooks", colour: "red" });
    assert.equal(refused.status, 422);
    assert.deepEqual(refused.body, { errors: ["colour is not a known field"] });
    const badUrl = await ops.post(hooks(shop.accountId), { url: "http://10.1.2.3/hooks" });
    assert.deepEqual(badUrl.body, {
      errors: ["url is refused: 10.1.2.3 is a private address, which webhooks may not reach"],
    });
  });

  /** Every operator webhook route, for an account and a webhook id. */
  const routes = (account: number | string, id: string) =>
    [
      ["POST", hooks(account), { url: receiver.url }],
      ["GET", hooks(account), undefined],
      ["DELETE", `${hooks(account)}/${id}`, undefined],
      ["POST", `${hooks(account)}/${id}/rotate`, undefined],
      ["GET", `${hooks(account)}/${id}/attempts`, undefined],
      ["POST", `${hooks(account)}/${id}/replay`, { since: new Date().toISOString() }],
      ["POST", `${hooks(account)}/${id}/enable`, undefined],
    ] as const;
  const call = (client: OpsClient, method: "GET" | "POST" | "DELETE", path: string, body?: object) =>
    method === "GET" ? client.get(path) : method === "POST" ? client.post(path, body) : client.delete(path, body);

  test("without the operator token every route is a 401", async () => {
    const stranger = opsClient(api, null);
    const wrong = opsClient(api, "not-the-operator-token-at-all");
    const mine = (await ops.post(hooks(shop.accountId), { url: receiver.url })).body;
    for (const [method, path, body] of routes(shop.accountId, mine.id)) {
      assert.equal((await call(stranger, method, path, body)).status, 401, `${method} ${path}`);
      assert.equal((await call(wrong, method, path, body)).status, 401, `${method} ${path}`);
    }
    assert.deepEqual(
      (await ops.get(hooks(shop.accountId))).body.filter((w: { id: string }) => w.id === mine.id).length,
      1,
      "nothing was deleted",
    );
  });

  test("an unknown account is a 404 naming it, before the dispatcher is asked", async () => {
    for (const [method, path, body] of routes(UNKNOWN_ACCOUNT, "00000000-0000-4000-8000-000000000000")) {
      const response = await call(ops, method, path, body);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.deepEqual(response.body, { errors: [`account ${UNKNOWN_ACCOUNT} not found`] }, `${method} ${path}`);
    }
    const notAnId = await ops.get(hooks("abc"));
    assert.deepEqual([notAnId.status, notAnId.body], [404, { errors: ["account abc not found"] }]);
  });

  test("another account's webhook, or an unknown id, is not found", async () => {
    const mine = (await ops.post(hooks(shop.accountId), { url: receiver.url })).body;
    const notFound = { errors: ["webhook not found"] };
    for (const [method, path, body] of routes(other.accountId, mine.id).slice(2)) {
      const response = await call(ops, method, path, body);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.deepEqual(response.body, notFound, `${method} ${path}`);
    }
    for (const id of ["not-a-webhook", "00000000-0000-4000-8000-000000000000"]) {
      const response = await ops.post(`${hooks(shop.accountId)}/${id}/enable`);
      assert.deepEqual([response.status, response.body], [404, notFound], id);
    }
    assert.equal(
      (await ops.get(hooks(shop.accountId))).body.some((w: { id: string }) => w.id === mine.id),
      true,
      "still there",
    );
  });

  test("enable: an endpoint disabled by a 410 receives the next event again; replay sends what it missed", async () => {
    const gone = await startReceiver(() => ({ status: 410 }));
    try {
      const account = await createTestAccount(api.db);
      const webhook = (await ops.post(hooks(account.accountId), { url: gone.url })).body;
      const first = makeEvent({ accountId: account.accountId, deliveryId: 626_001, sequence: 1 });
      await dispatcher.publish(first);
      const disabled = await waitFor(async () => {
        const [listed] = (await ops.get(hooks(account.accountId))).body;
        return listed?.status === "disabled" ? listed : undefined;
      });
      assert.equal(disabled.disabled_reason, "endpoint answered 410 Gone");
      const refusedReplay = await ops.post(`${hooks(account.accountId)}/${webhook.id}/replay`, {
        since: new Date(Date.now() - 60_000).toISOString(),
      });
      assert.equal(refusedReplay.status, 422, "a disabled endpoint is not replayed to");

      gone.respond(() => ({ status: 204 }));
      const enabled = await ops.post(`${hooks(account.accountId)}/${webhook.id}/enable`);
      assert.equal(enabled.status, 200);
      assert.deepEqual(
        [enabled.body.id, enabled.body.status, enabled.body.disabled_reason],
        [webhook.id, "enabled", null],
      );
      assert.ok(!("secret" in enabled.body));
      assert.deepEqual((await ops.get(hooks(account.accountId))).body, [enabled.body]);

      const next = makeEvent({ accountId: account.accountId, deliveryId: 626_002, sequence: 1 });
      await dispatcher.publish(next);
      await waitFor(async () => gone.received.some((r) => r.id === next.id), 10_000, "the next event");
      assert.deepEqual(
        gone.received.map((r) => r.id),
        [first.id, next.id],
        "the event dead-lettered at disable time stays dead",
      );

      const replay = await ops.post(`${hooks(account.accountId)}/${webhook.id}/replay`, {
        since: new Date(Date.now() - 60_000).toISOString(),
      });
      assert.deepEqual([replay.status, replay.body], [202, { replayed: 2 }]);
      await waitFor(async () => gone.received.filter((r) => r.id === first.id).length === 2, 10_000, "the replay");

      const again = await ops.post(`${hooks(account.accountId)}/${webhook.id}/enable`);
      assert.deepEqual([again.status, again.body], [200, enabled.body], "enabling an enabled endpoint changes nothing");
    } finally {
      await gone.close();
    }
  });

  test("CLI: webhooks create shows the secret once, webhooks list shows the endpoint without it", async () => {
    const account = String(shop.accountId);
    const created = await runOpsCli(baseUrl, [
      "webhooks",
      "create",
      "--account",
      account,
      "--url",
      receiver.url,
      "--events",
      "delivery.created,delivery.cancelled",
    ]);
    assert.equal(created.code, 0, created.stderr);
    const webhook = created.json();
    assert.match(webhook.secret, /^whsec_/);
    assert.deepEqual(webhook.events, ["delivery.created", "delivery.cancelled"]);
    assert.match(created.stderr, /store the secret in this answer now; it is not shown again/);

    const listed = await runOpsCli(baseUrl, ["webhooks", "list", "--account", account]);
    assert.equal(listed.code, 0, listed.stderr);
    const mine = listed.json().find((w: { id: string }) => w.id === webhook.id);
    assert.deepEqual(mine?.events, ["delivery.created", "delivery.cancelled"]);
    assert.ok(!listed.stdout.includes(webhook.secret), "the secret is not shown again");

    const unknown = await runOpsCli(baseUrl, ["webhooks", "list", "--account", String(UNKNOWN_ACCOUNT)]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, new RegExp(`answered 404:\\n  - account ${UNKNOWN_ACCOUNT} not found`));
  });
});

describe("/ops/v1/accounts/{id}/webhooks without a dispatcher", () => {
  let api: TestApi;
  let shop: TestAccount;

  before(async () => {
    api = await startTestApi();
    shop = await createTestAccount(api.db);
  });
  after(async () => api.close());

  test("answers 503 with Retry-After in the error shape", async () => {
    const response = await opsClient(api).post(`/accounts/${shop.accountId}/webhooks/any/enable`);
    assert.equal(response.status, 503);
    assert.equal(response.headers["retry-after"], "5");
    assert.deepEqual(response.body, { errors: ["webhooks are temporarily unavailable; retry later"] });
  });
});
