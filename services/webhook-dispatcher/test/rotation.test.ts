import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { Webhook } from "standardwebhooks";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const OVERLAP_MS = 1500;

describe("secret rotation", () => {
  let dispatcher: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    dispatcher = await startTestDispatcher({ env: { WEBHOOKS_ROTATION_OVERLAP_MS: String(OVERLAP_MS) } });
    receiver = await startReceiver();
  });
  after(async () => {
    await dispatcher.close();
    await receiver.close();
  });

  test("during the overlap both secrets sign; after it only the new one", async () => {
    const endpoint = await createEndpoint(dispatcher, 300, receiver.url);
    const rotated = await dispatcher.request<{ id: string; secret: string; previous_secret_expires_at: string }>(
      "rotate",
      { account_id: 300, webhook_id: endpoint.id },
    );
    assert.ok(rotated.ok);
    assert.equal(rotated.value.id, endpoint.id);
    assert.notEqual(rotated.value.secret, endpoint.secret);
    const expiresAt = Date.parse(rotated.value.previous_secret_expires_at);
    assert.ok(Math.abs(expiresAt - (Date.now() + OVERLAP_MS)) < 1000);

    const list = await dispatcher.request<Array<{ previous_secret_expires_at: string | null }>>("list", {
      account_id: 300,
    });
    assert.ok(list.ok);
    assert.equal(list.value[0]?.previous_secret_expires_at, rotated.value.previous_secret_expires_at);

    const during = makeEvent({ accountId: 300, deliveryId: 9001, sequence: 1 });
    await dispatcher.publish(during);
    const got = await waitFor(async () => receiver.received.find((r) => r.id === during.id), 10_000, "the event");
    assert.equal(got.signature.split(" ").length, 2, "two signatures, space-separated");
    assert.deepEqual(new Webhook(endpoint.secret).verify(got.body, got.headers), during);
    assert.deepEqual(new Webhook(rotated.value.secret).verify(got.body, got.headers), during);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 50)));
    const afterOverlap = makeEvent({ accountId: 300, deliveryId: 9001, sequence: 2 });
    await dispatcher.publish(afterOverlap);
    const later = await waitFor(async () => receiver.received.find((r) => r.id === afterOverlap.id), 10_000, "later");
    assert.equal(later.signature.split(" ").length, 1);
    assert.deepEqual(new Webhook(rotated.value.secret).verify(later.body, later.headers), afterOverlap);
    assert.throws(() => new Webhook(endpoint.secret).verify(later.body, later.headers));
  });

  test("secrets are stored encrypted, never in clear", async () => {
    const endpoint = await createEndpoint(dispatcher, 301, receiver.url);
    const row = await dispatcher.db
      .selectFrom("endpoints")
      .select(["secret_ciphertext"])
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    assert.ok(!row.secret_ciphertext.includes(endpoint.secret.slice(6)));
    assert.match(row.secret_ciphertext, /^v1\./);
  });
});
