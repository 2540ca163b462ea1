import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import {
  makeEvent,
  type Receiver,
  startReceiver,
  startTestDispatcher,
  type TestDispatcher,
} from "@dos/webhook-dispatcher/testing";
import { type DeliveriesTestbed, outboundBody, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createTestAccount, startTestApi, type TestAccount, type TestApi, UUID } from "./fixtures.ts";
import { TIMESTAMP } from "./ops-client.ts";
import { startWebhooksTestbed } from "./webhooks-testbed.ts";

describe("/api/v2/webhooks, forwarded to webhook-dispatcher", () => {
  let api: TestApi;
  let dispatcher: TestDispatcher;
  let receiver: Receiver;
  let shop: TestAccount;
  let other: TestAccount;
  let close: () => Promise<void>;

  before(async () => {
    ({ api, dispatcher, receiver, shop, other, close } = await startWebhooksTestbed());
  });
  after(() => close());

  const call = (account: TestAccount, method: "GET" | "POST" | "DELETE", url: string, payload?: object) =>
    api.app.inject({ method, url: `/api/v2${url}`, headers: account.headers, ...(payload ? { payload } : {}) });

  test("register, list, rotate, read attempts, replay and delete an endpoint", async () => {
    const created = await call(shop, "POST", "/webhooks", { url: receiver.url });
    assert.equal(created.statusCode, 201);
    const webhook = created.json();
    assert.match(webhook.id, UUID);
    assert.match(webhook.secret, /^whsec_/);
    assert.match(webhook.created_at, TIMESTAMP);
    assert.deepEqual(
      { ...webhook, id: "", secret: "", created_at: "" },
      {
        id: "",
        url: receiver.url,
        events: null,
        status: "enabled",
        disabled_reason: null,
        created_at: "",
        previous_secret_expires_at: null,
        secret: "",
      },
    );
    assert.equal(created.headers.location, `/api/v2/webhooks/${webhook.id}`);

    const filtered = await call(shop, "POST", "/webhooks", { url: receiver.url, events: ["delivery.cancelled"] });
    assert.equal(filtered.statusCode, 201);
    assert.deepEqual(filtered.json().events, ["delivery.cancelled"]);

    const list = await call(shop, "GET", "/webhooks");
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json().map((w: { id: string }) => w.id),
      [webhook.id, filtered.json().id],
    );
    assert.ok(
      list.json().every((w: object) => !("secret" in w)),
      "the secret is never listed",
    );

    const rotated = await call(shop, "POST", `/webhooks/${webhook.id}/rotate`);
    assert.equal(rotated.statusCode, 200);
    assert.equal(rotated.json().id, webhook.id);
    assert.match(rotated.json().secret, /^whsec_/);
    assert.match(rotated.json().previous_secret_expires_at, TIMESTAMP);

    const event = makeEvent({ accountId: shop.accountId, deliveryId: 424_242, sequence: 1 });
    await dispatcher.publish(event);
    const attempts = await waitFor(async () => {
      const reply = await call(shop, "GET", `/webhooks/${webhook.id}/attempts?limit=10`);
      const body = reply.json() as Array<Record<string, unknown>>;
      return reply.statusCode === 200 && body.length === 1 ? body : undefined;
    });
    const [attempt] = attempts;
    assert.equal(attempt?.event_id, event.id);
    assert.equal(attempt?.event_type, "delivery.created");
    assert.equal(attempt?.delivery_id, 424_242);
    assert.equal(attempt?.status_code, 204);
    assert.equal(attempt?.outcome, "delivered");

    const since = new Date(Date.now() - 60_000).toISOString();
    const replay = await call(shop, "POST", `/webhooks/${webhook.id}/replay`, { since });
    assert.equal(replay.statusCode, 202);
    assert.deepEqual(replay.json(), { replayed: 1 });
    await waitFor(async () => receiver.received.filter((r) => r.id === event.id).length === 2, 10_000, "replay");

    const deleted = await call(shop, "DELETE", `/webhooks/${webhook.id}`);
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, "");
    assert.deepEqual(
      (await call(shop, "GET", "/webhooks")).json().map((w: { id: string }) => w.id),
      [filtered.json().id],
    );
    const again = await call(shop, "DELETE", `/webhooks/${webhook.id}`);
    assert.equal(again.statusCode, 404);
    assert.deepEqual(again.json(), { errors: ["webhook not found"] });
  });

  test("another account's webhook, or an unknown id, is not found", async () => {
    const mine = (await call(shop, "POST", "/webhooks", { url: receiver.url })).json();
    assert.deepEqual((await call(other, "GET", "/webhooks")).json(), []);
    const notFound = { errors: ["webhook not found"] };
    for (const [method, path, body] of [
      ["DELETE", `/webhooks/${mine.id}`, undefined],
      ["POST", `/webhooks/${mine.id}/rotate`, undefined],
      ["GET", `/webhooks/${mine.id}/attempts`, undefined],
      ["POST", `/webhooks/${mine.id}/replay`, { since: new Date().toISOString() }],
      ["DELETE", "/webhooks/not-a-webhook", undefined],
      ["DELETE", "/webhooks/00000000-0000-4000-8000-000000000000", undefined],
    ] as const) {
      const response = await call(other, method, path, body);
      assert.equal(response.statusCode, 404, `${method} ${path}`);
      assert.deepEqual(response.json(), notFound);
    }
    assert.equal(
      (await call(shop, "GET", "/webhooks")).json().some((w: { id: string }) => w.id === mine.id),
      true,
    );
  });

  test("invalid bodies and refused URLs are 422 naming the field", async () => {
    const cases: Array<[object, string[]]> = [
      [{}, ["url is required"]],
      [{ url: 42 }, ["url must be a string"]],
      [{ url: receiver.url, colour: "red" }, ["colour is not a known field"]],
      [{ url: "ftp://example.com/hooks" }, ["url must be an absolute http or https URL"]],
      [
        { url: "http://10.1.2.3/hooks" },
        ["url is refused: 10.1.2.3 is a private address, which webhooks may not reach"],
      ],
      [
        { url: "http://169.254.169.254/latest" },
        ["url is refused: 169.254.169.254 is the cloud metadata address, which webhooks may not reach"],
      ],
    ];
    for (const [body, errors] of cases) {
      const response = await call(shop, "POST", "/webhooks", body);
      assert.equal(response.statusCode, 422, JSON.stringify(body));
      assert.deepEqual(response.json(), { errors }, JSON.stringify(body));
    }
    const badKind = await call(shop, "POST", "/webhooks", { url: receiver.url, events: ["delivery.exploded"] });
    assert.equal(badKind.statusCode, 422);
    assert.match(badKind.json().errors[0], /^events\[0\] must be one of delivery\.created, /);

    const hook = (await call(shop, "POST", "/webhooks", { url: receiver.url })).json();
    const badSince = await call(shop, "POST", `/webhooks/${hook.id}/replay`, { since: "yesterday" });
    assert.equal(badSince.statusCode, 422);
    assert.match(badSince.json().errors[0], /^since must be an ISO 8601 timestamp/);
    const tooOld = await call(shop, "POST", `/webhooks/${hook.id}/replay`, { since: "2020-01-01T00:00:00Z" });
    assert.deepEqual(tooOld.json(), { errors: ["since must be within the last 30 days"] });
    // A time zone mistake, not "nothing to send": the client is told.
    const future = new Date(Date.now() + 2 * 60 * 60 * 1000).toISOString();
    const ahead = await call(shop, "POST", `/webhooks/${hook.id}/replay`, { since: future });
    assert.equal(ahead.statusCode, 422);
    assert.deepEqual(ahead.json(), { errors: ["since must not be in the future"] });
    const badLimit = await call(shop, "GET", `/webhooks/${hook.id}/attempts?limit=0`);
    assert.equal(badLimit.statusCode, 422);
  });

  test("without credentials the webhooks are not reachable", async () => {
    const response = await api.app.inject({ method: "GET", url: "/api/v2/webhooks" });
    assert.equal(response.statusCode, 401);
  });
});

describe("/api/v2/webhooks without a dispatcher", () => {
  let api: TestApi;
  let shop: TestAccount;

  before(async () => {
    api = await startTestApi();
    shop = await createTestAccount(api.db);
  });
  after(async () => {
    await api.close();
  });

  test("answers 503 with Retry-After in the error shape", async () => {
    const response = await api.app.inject({ method: "GET", url: "/api/v2/webhooks", headers: shop.headers });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers["retry-after"], "5");
    assert.deepEqual(response.json(), { errors: ["webhooks are temporarily unavailable; retry later"] });
  });
});

describe("webhooks of deliveries changed through the API", () => {
  let testbed: DeliveriesTestbed;
  let dispatcher: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    testbed = await startDeliveriesTestbed();
    await testbed.api.start();
    dispatcher = await startTestDispatcher({ namespace: testbed.api.config.NATS_NAMESPACE });
    receiver = await startReceiver();
  });
  after(async () => {
    await dispatcher.close();
    await testbed.close();
    await receiver.close();
  });

  test("create then cancel reach the endpoint in order, each with the delivery as the API shows it", async () => {
    const { api, account } = testbed;
    const headers = account.headers;
    const hook = await api.app.inject({
      method: "POST",
      url: "/api/v2/webhooks",
      headers,
      payload: { url: receiver.url },
    });
    assert.equal(hook.statusCode, 201);
    const created = await api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers,
      payload: outboundBody(account),
    });
    assert.equal(created.statusCode, 201);
    const id = created.json().id;
    const cancelled = await api.app.inject({ method: "PATCH", url: `/api/v2/deliveries/${id}/cancel`, headers });
    assert.equal(cancelled.statusCode, 200);

    await waitFor(async () => receiver.received.length >= 2, 15_000, "two webhooks");
    const envelopes = receiver.received.map((r) => JSON.parse(r.body));
    assert.deepEqual(
      envelopes.map((e) => [e.type, e.delivery_id, e.sequence, e.account_id]),
      [
        ["delivery.created", id, 1, account.accountId],
        ["delivery.cancelled", id, 2, account.accountId],
      ],
    );
    assert.deepEqual(envelopes[1].payload.delivery, cancelled.json());
    assert.equal(envelopes[1].payload.previous_status, "saved");
    for (const request of receiver.received) {
      assert.equal(JSON.parse(request.body).id, request.id, "webhook-id is the event id");
    }
  });
});
