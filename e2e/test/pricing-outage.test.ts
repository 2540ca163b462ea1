import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { call, clientHeaders, opsHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../src/client.ts";
import { bootSystemUnderTest, restartService, type SystemUnderTest } from "../src/system.ts";

describe("a create while pricing is down", () => {
  let system: SystemUnderTest;
  let account: SeededAccount;
  let api: string;

  before(async () => {
    system = await bootSystemUnderTest();
    [account] = seedAccounts(system) as [SeededAccount];
    api = system.url("delivery-api");
    const tariff = await call(`${system.opsUrl}/ops/v1/accounts/${account.account_id}/tariffs`, "POST", opsHeaders, {
      base_cents: { outbound: 900, inbound: 900, other: 1400 },
      per_package_cents: 100,
    });
    assert.equal(tariff.status, 201, JSON.stringify(tariff.body));
  });
  after(async () => system.teardown());

  const deliveryCount = async () => {
    const list = await call(`${api}/api/v2/deliveries`, "GET", clientHeaders(account));
    return Number(list.headers.get("x-total-count"));
  };

  test("is answered 503 with Retry-After and saves nothing, then succeeds once pricing is back", async () => {
    const headers = { ...clientHeaders(account), "idempotency-key": "outage-retry-1" };
    const body = outboundDelivery(account, "outage-1");
    const priced = await call(
      `${api}/api/v2/deliveries`,
      "POST",
      clientHeaders(account),
      outboundDelivery(account, "before"),
    );
    assert.equal(priced.status, 201);
    assert.equal((priced.body as { price_cents: number }).price_cents, 1000);
    const before = await deliveryCount();

    const pricing = system.services.find((s) => s.spec.name === "pricing");
    assert.ok(pricing);
    pricing.child.kill("SIGTERM");
    assert.equal((await pricing.exited).code, 0);

    const refused = await call(`${api}/api/v2/deliveries`, "POST", headers, body);
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    const errors = (refused.body as { errors: string[] }).errors;
    assert.equal(errors.length, 1);
    assert.match(errors[0] ?? "", /pricing/);
    assert.equal(await deliveryCount(), before, "a refused create saved nothing");

    await restartService(system, "pricing");

    const retried = await call(`${api}/api/v2/deliveries`, "POST", headers, body);
    assert.equal(retried.status, 201);
    assert.equal((retried.body as { price_cents: number }).price_cents, 1000);
    const again = await call(`${api}/api/v2/deliveries`, "POST", headers, body);
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, retried.body, "the same Idempotency-Key gives the first answer back");
    assert.equal(await deliveryCount(), before + 1);
  });
});
