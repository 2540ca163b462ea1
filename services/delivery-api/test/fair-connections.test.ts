/**
 * A client request's queries wait for a database connection as its account (the kit's
 * fair-connections.ts), so that one account's burst queues behind itself and not before another
 * account's queries. What is checked here is the wiring: the tenant each connection is taken for.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { currentTenant } from "@dos/service-kit";
import { createTestAccount, startTestApi, type TestApi } from "./fixtures.ts";

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(async () => api.close());

/** The tenant of each connection taken while `work` runs. */
async function tenantsDuring(work: () => Promise<unknown>): Promise<Array<string | undefined>> {
  const tenants: Array<string | undefined> = [];
  const record = () => tenants.push(currentTenant());
  api.pool.on("acquire", record);
  try {
    await work();
  } finally {
    api.pool.off("acquire", record);
  }
  return tenants;
}

test("a client request's queries take their connections as its account; an unauthenticated one's as nobody", async () => {
  const [shop, other] = [await createTestAccount(api.db), await createTestAccount(api.db)];
  // Connections already open, so that each is handed out in the caller's own context.
  await Promise.all([api.pool.query("select 1"), api.pool.query("select 1")]);

  const list = await tenantsDuring(async () => {
    const answer = await api.app.inject({ method: "GET", url: "/api/v2/deliveries", headers: shop.headers });
    assert.equal(answer.statusCode, 200);
  });
  // The page and its count: two queries, both as the shop.
  assert.deepEqual(
    list.filter((tenant) => tenant !== undefined),
    [`account:${shop.accountId}`, `account:${shop.accountId}`],
  );

  const both = await tenantsDuring(() =>
    Promise.all([
      api.app.inject({ method: "GET", url: "/api/v2/package_types", headers: shop.headers }),
      api.app.inject({ method: "GET", url: "/api/v2/package_types", headers: other.headers }),
    ]),
  );
  assert.deepEqual(
    new Set(both.filter((tenant) => tenant !== undefined)),
    new Set([`account:${shop.accountId}`, `account:${other.accountId}`]),
  );

  const stranger = await tenantsDuring(async () => {
    const answer = await api.app.inject({
      method: "GET",
      url: "/api/v2/deliveries",
      headers: { "x-user-email": shop.email, "x-user-token": "not-the-token" },
    });
    assert.equal(answer.statusCode, 401);
  });
  assert.deepEqual(
    stranger.filter((tenant) => tenant !== undefined),
    [],
  );
});
