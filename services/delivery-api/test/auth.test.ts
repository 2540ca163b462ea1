import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { createTestAccount, startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";

describe("client API authentication", () => {
  let api: TestApi;
  let cached: TestApi;
  let account: TestAccount;
  before(async () => {
    api = await startTestApi();
    cached = await startTestApi({ API_AUTH_CACHE_MS: "300" });
    account = await createTestAccount(api.db);
  });
  after(async () => Promise.all([api.close(), cached.close()]));

  test("missing headers answer 401 in the error shape", async () => {
    const response = await api.app.inject({ method: "GET", url: "/api/v2/deliveries" });
    assert.equal(response.statusCode, 401);
    assert.deepEqual(response.json(), { errors: ["X-User-Email and X-User-Token headers are required"] });
  });

  test("a wrong token answers 401 and does not say which header was wrong", async () => {
    const response = await api.app.inject({
      method: "GET",
      url: "/api/v2/deliveries",
      headers: { "x-user-email": account.email, "x-user-token": `${account.token}x` },
    });
    assert.equal(response.statusCode, 401);
    assert.deepEqual(response.json(), { errors: ["X-User-Email or X-User-Token is invalid"] });
  });

  test("another user's e-mail with a valid token answers 401", async () => {
    const other = await createTestAccount(api.db);
    const response = await api.app.inject({
      method: "GET",
      url: "/api/v2/deliveries",
      headers: { "x-user-email": other.email, "x-user-token": account.token },
    });
    assert.equal(response.statusCode, 401);
  });

  test("a revoked token answers 401", async () => {
    const revoked = await createTestAccount(api.db);
    await api.db
      .updateTable("api_tokens")
      .set({ revoked_at: new Date() })
      .where("user_id", "in", api.db.selectFrom("users").select("id").where("account_id", "=", revoked.accountId))
      .execute();
    const response = await api.app.inject({ method: "GET", url: "/api/v2/deliveries", headers: revoked.headers });
    assert.equal(response.statusCode, 401);
  });

  test("a token revoked behind the cache's back stops working within API_AUTH_CACHE_MS", async () => {
    const revoked = await createTestAccount(cached.db);
    const list = () => cached.app.inject({ method: "GET", url: "/api/v2/deliveries", headers: revoked.headers });
    assert.equal((await list()).statusCode, 200);
    // Revoked straight in the database, as another replica's operator API would.
    await cached.db
      .updateTable("api_tokens")
      .set({ revoked_at: new Date() })
      .where("user_id", "in", cached.db.selectFrom("users").select("id").where("account_id", "=", revoked.accountId))
      .execute();
    await waitFor(async () => (await list()).statusCode === 401, 5000);
    const refused = await list();
    assert.deepEqual(refused.json(), { errors: ["X-User-Email or X-User-Token is invalid"] });
  });

  test("/api/v1 answers 410 and says version 1 is retired", async () => {
    const response = await api.app.inject({ method: "POST", url: "/api/v1/deliveries", payload: {} });
    assert.equal(response.statusCode, 410);
    assert.match(response.json().errors[0], /version 1 is retired/);
  });
});
