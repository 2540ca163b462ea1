/**
 * The client API's limit per account (RateLimit fields, 429 with Retry-After, operator
 * override) and its exactness across two replicas sharing the RATE_LIMITS bucket.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestAccount, startReplica, startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";
import { opsClient } from "./ops-client.ts";

// 10 requests at once, then one per 6 minutes: nothing refills while a test runs, however
// loaded the machine, so every count and header below is exact.
const QUOTA = 10;
const WINDOW = 3600;
const INTERVAL_S = WINDOW / QUOTA;

describe("client API rate limits", () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi({
      API_RATE_LIMIT_QUOTA: String(QUOTA),
      API_RATE_LIMIT_WINDOW_SECONDS: String(WINDOW),
      // Past this wait a replica decides from its own mirror (NATS taken as down: a per-replica
      // limit, by design). These tests count exactness with NATS up; on a loaded machine a CAS
      // once took longer than the 250 ms default and two replicas admitted 1,010 of 1,000.
      API_RATE_LIMIT_TIMEOUT_MS: "10000",
    });
    await api.start();
  });
  after(async () => api.close());

  const get = (app: FastifyInstance, account: Pick<TestAccount, "headers">, url = "/api/v2/package_types") =>
    app.inject({ method: "GET", url, headers: account.headers });
  const override = async (accountId: number, rateLimit: unknown) =>
    opsClient(api).patch(`/accounts/${accountId}`, { rate_limit: rateLimit });

  test("every answer carries RateLimit-Policy and RateLimit: 200, 404, 422 and 401 alike", async () => {
    const account = await createTestAccount(api.db);
    const ok = await get(api.app, account);
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers["ratelimit-policy"], `"account";q=${QUOTA};w=${WINDOW}`);
    assert.equal(ok.headers.ratelimit, `"account";r=${QUOTA - 1};t=${INTERVAL_S}`);

    const missing = await get(api.app, account, "/api/v2/no_such_route");
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers.ratelimit, `"account";r=${QUOTA - 2};t=${2 * INTERVAL_S}`);

    const invalid = await api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers: account.headers,
      payload: { kind: "nonsense" },
    });
    assert.equal(invalid.statusCode, 422);
    assert.equal(invalid.headers.ratelimit, `"account";r=${QUOTA - 3};t=${3 * INTERVAL_S}`);

    const stranger = await get(api.app, { headers: { "x-user-email": account.email, "x-user-token": "wrong" } });
    assert.equal(stranger.statusCode, 401);
    assert.match(String(stranger.headers["ratelimit-policy"]), /^"failed-auth-address";q=\d+;w=\d+$/);
    assert.match(String(stranger.headers.ratelimit), /^"failed-auth-address";r=\d+;t=\d+$/);
  });

  test("past the quota: 429 with Retry-After in the error shape; another account is not affected", async () => {
    const flooding = await createTestAccount(api.db);
    const other = await createTestAccount(api.db);
    const answers = await Promise.all(Array.from({ length: QUOTA + 5 }, () => get(api.app, flooding)));
    const statuses = answers.map((a) => a.statusCode);
    assert.equal(statuses.filter((s) => s === 200).length, QUOTA, statuses.join(","));
    const refused = answers.filter((a) => a.statusCode === 429);
    assert.equal(refused.length, 5);
    for (const answer of refused) {
      const wait = Number(answer.headers["retry-after"]);
      assert.ok(wait >= INTERVAL_S - 5 && wait <= INTERVAL_S, `Retry-After: ${wait}`);
      assert.match(String(answer.headers.ratelimit), /^"account";r=0;t=\d+$/);
      assert.deepEqual(answer.json(), {
        errors: [`this account sends more than ${QUOTA} requests per ${WINDOW} s; retry after ${wait} s`],
      });
    }
    const bystander = await get(api.app, other);
    assert.equal(bystander.statusCode, 200);
    assert.equal(bystander.headers.ratelimit, `"account";r=${QUOTA - 1};t=${INTERVAL_S}`);
  });

  test("Retry-After is the truth: after waiting it, the next request passes", async () => {
    const account = await createTestAccount(api.db);
    // 10 a minute: one more every 6 s.
    assert.equal((await override(account.accountId, { quota: 10, window_seconds: 60 })).status, 200);
    await Promise.all(Array.from({ length: 10 }, () => get(api.app, account)));
    const refused = await get(api.app, account);
    assert.equal(refused.statusCode, 429);
    const wait = Number(refused.headers["retry-after"]);
    assert.ok(wait >= 1 && wait <= 6, `Retry-After: ${wait}`);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    assert.equal((await get(api.app, account)).statusCode, 200);
  });

  test("an operator's override takes effect at once, is validated, and null restores the default", async () => {
    const account = await createTestAccount(api.db);
    assert.equal((await get(api.app, account)).statusCode, 200);
    const set = await override(account.accountId, { quota: 600, window_seconds: 60 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.rate_limit, { quota: 600, window_seconds: 60 });
    const after = await get(api.app, account);
    assert.equal(after.headers["ratelimit-policy"], `"account";q=600;w=60`);
    const burst = await Promise.all(Array.from({ length: 30 }, () => get(api.app, account)));
    assert.deepEqual(new Set(burst.map((a) => a.statusCode)), new Set([200]));

    for (const [body, message] of [
      [{ quota: 0, window_seconds: 1 }, "rate_limit.quota must be at least 1"],
      [{ quota: 10, window_seconds: 3601 }, "rate_limit.window_seconds must be at most 3600"],
      [{ quota: 10 }, "rate_limit.window_seconds is required"],
      [{ quota: 1.5, window_seconds: 1 }, "rate_limit.quota must be an integer"],
      [{ quota: 10, window_seconds: 1, burst: 5 }, "rate_limit.burst is not a known field"],
    ] as const) {
      const refused = await override(account.accountId, body);
      assert.equal(refused.status, 422, JSON.stringify(body));
      assert.deepEqual(refused.body, { errors: [message] }, JSON.stringify(body));
    }
    assert.deepEqual((await opsClient(api).get(`/accounts/${account.accountId}`)).body.rate_limit, {
      quota: 600,
      window_seconds: 60,
    });

    const reset = await override(account.accountId, null);
    assert.equal(reset.body.rate_limit, null);
    assert.equal((await get(api.app, account)).headers["ratelimit-policy"], `"account";q=${QUOTA};w=${WINDOW}`);
  });

  test("two replicas sharing the bucket admit exactly the quota between them", async () => {
    const replica = await startReplica(api);
    try {
      const account = await createTestAccount(api.db);
      // 20 per hour: nothing refills during the test, so the count admitted is exact.
      assert.equal((await override(account.accountId, { quota: 20, window_seconds: 3600 })).status, 200);
      const apps = [api.app, replica.app];
      // 8 through the first replica: the second one must know them.
      for (let i = 0; i < 8; i++) assert.equal((await get(api.app, account)).statusCode, 200);
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => get(apps[i % 2] as FastifyInstance, account)),
      );
      const admitted = answers.filter((a) => a.statusCode === 200);
      assert.equal(admitted.length, 12, answers.map((a) => a.statusCode).join(","));
      assert.equal(answers.filter((a) => a.statusCode === 429).length, 48);
      const remaining = admitted
        .map((a) => Number(/r=(\d+)/.exec(String(a.headers.ratelimit))?.[1]))
        .sort((a, b) => a - b);
      assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "each admitted request saw its own count");
      // A later request on either replica is refused too.
      for (const app of apps) assert.equal((await get(app, account)).statusCode, 429);

      // A large quota is served from leases (1% of it per CAS): never more than the quota, and
      // at most a lease per replica short of it.
      const large = await createTestAccount(api.db);
      assert.equal((await override(large.accountId, { quota: 1000, window_seconds: 3600 })).status, 200);
      const statuses: number[] = [];
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 16 }, async (_, worker) => {
          for (let i = 0; i < 80; i++)
            statuses.push((await get(apps[worker % 2] as FastifyInstance, large)).statusCode);
        }),
      );
      const largeAdmitted = statuses.filter((status) => status === 200).length;
      // One more every 3.6 s refills while the flood lasts.
      const refilled = Math.floor((Date.now() - started) / 3600) + 1;
      assert.ok(
        largeAdmitted <= 1000 + refilled && largeAdmitted >= 1000 - 2 * 10,
        `${largeAdmitted} of 1000 (+${refilled} refilled) admitted`,
      );
    } finally {
      await replica.close();
    }
  });
});
