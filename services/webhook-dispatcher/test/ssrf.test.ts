import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { createSecretBox } from "../src/signing/secret-box.ts";
import { generateSecret } from "../src/signing/signing.ts";
import { startTestDispatcher, TEST_SECRET_KEY, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const REACH = "which webhooks may not reach";

describe("SSRF guard without an allow-list", () => {
  let strict: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    strict = await startTestDispatcher({ env: { WEBHOOKS_ALLOWED_HOSTS: "" } });
    receiver = await startReceiver();
  });
  after(async () => {
    await strict.close();
    await receiver.close();
  });

  const create = (url: string) => strict.request("create", { account_id: 400, url });

  test("a loopback endpoint, by address or by a name resolving to loopback, is refused with 422 naming url", async () => {
    assert.deepEqual(await create(`http://127.0.0.1:${receiver.port}/hooks`), {
      ok: false,
      code: 422,
      errors: [`url is refused: 127.0.0.1 is a loopback address, ${REACH}`],
    });
    const byName = await create(`http://localhost:${receiver.port}/hooks`);
    assert.equal(byName.ok, false);
    assert.ok(!byName.ok && byName.code === 422);
    assert.match(
      byName.errors[0] ?? "",
      /^url is refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address, which webhooks may not reach$/,
    );
    assert.deepEqual(await create(`http://[::1]:${receiver.port}/hooks`), {
      ok: false,
      code: 422,
      errors: [`url is refused: ::1 is a loopback address, ${REACH}`],
    });
  });

  test("private, metadata and IPv4-mapped addresses are refused", async () => {
    const cases: Array<[string, string]> = [
      ["http://10.0.0.7/hooks", "10.0.0.7 is a private address"],
      ["http://172.20.1.1/hooks", "172.20.1.1 is a private address"],
      ["http://192.168.0.1/hooks", "192.168.0.1 is a private address"],
      ["http://169.254.169.254/latest/meta-data", "169.254.169.254 is the cloud metadata address"],
      ["http://[fd00::1]/hooks", "fd00::1 is a unique local (private) address"],
      ["http://[::ffff:127.0.0.1]/hooks", "::ffff:7f00:1 is an IPv4-mapped IPv6 address"],
    ];
    for (const [url, refusal] of cases) {
      assert.deepEqual(await create(url), { ok: false, code: 422, errors: [`url is refused: ${refusal}, ${REACH}`] });
    }
  });

  test("a URL that is not http(s) or carries credentials is refused", async () => {
    assert.deepEqual(await create("ftp://example.com/x"), {
      ok: false,
      code: 422,
      errors: ["url must be an absolute http or https URL"],
    });
    assert.deepEqual(await create("not a url"), {
      ok: false,
      code: 422,
      errors: ["url must be an absolute http or https URL"],
    });
    assert.deepEqual(await create("https://user:pw@example.com/x"), {
      ok: false,
      code: 422,
      errors: ["url must not contain a user name or password"],
    });
    assert.equal(receiver.received.length, 0);
  });

  test("at send time the address is checked again: a host now resolving to loopback gets nothing", async () => {
    // As if the endpoint had been registered while its name resolved to a public address.
    const box = createSecretBox(TEST_SECRET_KEY);
    const endpoint = await strict.db
      .insertInto("endpoints")
      .values({
        account_id: 401,
        url: `http://localhost:${receiver.port}/hooks`,
        secret_ciphertext: box.seal(generateSecret()),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await strict.publish(makeEvent({ accountId: 401, deliveryId: 9501, sequence: 1 }));
    const attempt = await waitFor(async () =>
      strict.db.selectFrom("attempts").selectAll().where("endpoint_id", "=", endpoint.id).executeTakeFirst(),
    );
    assert.equal(attempt.status_code, null);
    assert.match(attempt.error ?? "", /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
    assert.equal(receiver.received.length, 0);
  });
});

describe("SSRF guard with loopback allow-listed (local demo, tests)", () => {
  let allowing: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    allowing = await startTestDispatcher({ env: { WEBHOOKS_ALLOWED_HOSTS: "127.0.0.0/8,::1" } });
    receiver = await startReceiver();
  });
  after(async () => {
    await allowing.close();
    await receiver.close();
  });

  test("a loopback endpoint and a name resolving to loopback are accepted and receive events", async () => {
    for (const url of [`http://127.0.0.1:${receiver.port}/hooks`, `http://localhost:${receiver.port}/hooks`]) {
      const reply = await allowing.request<{ url: string }>("create", { account_id: 402, url });
      assert.ok(reply.ok, JSON.stringify(reply));
      assert.equal(reply.value.url, url);
    }
    await allowing.publish(makeEvent({ accountId: 402, deliveryId: 9601, sequence: 1 }));
    await waitFor(async () => receiver.received.length >= 2, 10_000, "both endpoints");
  });
});
