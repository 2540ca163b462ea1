import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { startTestApi, type TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient, TIMESTAMP } from "./ops-client.ts";

describe("operator API: accounts, users and API tokens", () => {
  let api: TestApi;
  let ops: OpsClient;
  before(async () => {
    api = await startTestApi();
    ops = opsClient(api);
  });
  after(async () => api.close());

  const newAccount = async (body: object = {}) => {
    const created = await ops.post("/accounts", { company_name: "Shop", ...body });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body as { id: number };
  };
  const newUser = async (accountId: number, email: string) => {
    const created = await ops.post(`/accounts/${accountId}/users`, { email });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body as { id: number };
  };

  describe("the bearer guard", () => {
    for (const [label, token] of [
      ["without a token", null],
      ["with a wrong token", "not-the-operator-token-at-all-0123456789"],
    ] as const) {
      test(`answers 401 ${label} on every kind of route`, async () => {
        const stranger = opsClient(api, token);
        for (const response of [
          await stranger.get("/accounts"),
          await stranger.post("/accounts", { company_name: "Intruder" }),
          await stranger.post("/accounts/1/users/1/tokens"),
          await stranger.put("/accounts/1/zones", { zones: [] }),
        ]) {
          assert.equal(response.status, 401);
          assert.deepEqual(response.body, { errors: ["Authorization: Bearer <operator token> is required"] });
        }
        const rows = await api.db.selectFrom("accounts").select("id").where("company_name", "=", "Intruder").execute();
        assert.deepEqual(rows, []);
      });
    }
  });

  describe("accounts", () => {
    test("create applies the default settings and answers 201 with the account", async () => {
      const created = await ops.post("/accounts", { company_name: "  Fleur & Co  " });
      assert.equal(created.status, 201);
      assert.match(created.body.created_at, TIMESTAMP);
      assert.deepEqual(
        { ...created.body, created_at: undefined },
        {
          id: created.body.id,
          company_name: "Fleur & Co",
          environment: "production",
          settings: {
            bring_back_containers: false,
            default_task_gap_minutes: 0,
            default_task_duration_minutes: 60,
            recipient_phone_optional: false,
            phone_default_region: "FR",
          },
          rate_limit: null,
          created_at: undefined,
        },
      );
      assert.deepEqual((await ops.get(`/accounts/${created.body.id}`)).body, created.body);
    });

    test("create takes the environment and every setting", async () => {
      const settings = {
        bring_back_containers: true,
        default_task_gap_minutes: 30,
        default_task_duration_minutes: 90,
        recipient_phone_optional: true,
        phone_default_region: "be",
      };
      const created = await ops.post("/accounts", { company_name: "Test shop", environment: "test", settings });
      assert.equal(created.status, 201);
      assert.equal(created.body.environment, "test");
      assert.deepEqual(created.body.settings, { ...settings, phone_default_region: "BE" });
    });

    test("create refuses bad bodies with one message per problem and writes nothing", async () => {
      const before = await api.db
        .selectFrom("accounts")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirst();
      const cases: Array<[unknown, string[]]> = [
        [undefined, ["body must be an object"]],
        [{}, ["company_name is required"]],
        [{ company_name: "   " }, ["company_name must not be blank"]],
        [
          { company_name: "Shop\u0000", settings: { "x\u0000": ["\u0000"] } },
          [
            "company_name must not contain the NUL character",
            "settings.x\\u0000 must not contain the NUL character",
            "settings.x\\u0000[0] must not contain the NUL character",
          ],
        ],
        [{ company_name: "x".repeat(256) }, ["company_name must be at most 255 characters"]],
        [
          {
            company_name: "Shop",
            environment: "staging",
            owner: "me",
            settings: { bring_back_containers: "yes", default_task_gap_minutes: -1, default_task_duration_minutes: 0 },
          },
          [
            "owner is not a known field",
            "environment must be one of production, test",
            "settings.bring_back_containers must be true or false",
            "settings.default_task_gap_minutes must be at least 0",
            "settings.default_task_duration_minutes must be at least 1",
          ],
        ],
        [
          { company_name: "Shop", settings: { default_task_gap_minutes: 1.5 } },
          ["settings.default_task_gap_minutes must be an integer"],
        ],
        [
          { company_name: "Shop", settings: { phone_default_region: "ZZ" } },
          ["settings.phone_default_region must be an ISO 3166-1 alpha-2 region code, such as FR"],
        ],
      ];
      for (const [body, errors] of cases) {
        const response = await ops.post("/accounts", body);
        assert.equal(response.status, 422, JSON.stringify(body));
        assert.deepEqual(new Set(response.body.errors), new Set(errors), JSON.stringify(response.body));
      }
      const after = await api.db
        .selectFrom("accounts")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirst();
      assert.deepEqual(after, before);
    });

    test("get answers 404 for an unknown or impossible id", async () => {
      const unknown = await ops.get("/accounts/999999");
      assert.deepEqual([unknown.status, unknown.body], [404, { errors: ["account 999999 not found"] }]);
      const impossible = await ops.get("/accounts/abc");
      assert.equal(impossible.status, 404);
      assert.deepEqual(impossible.body, { errors: ["account abc not found"] });
      assert.equal((await ops.get("/accounts/99999999999999999999")).status, 404);
    });

    test("list pages through accounts oldest first, with a Link to the next page", async () => {
      const a = await newAccount({ environment: "test" });
      const b = await newAccount({ environment: "test" });
      const c = await newAccount({ environment: "test" });
      const first = await ops.get("/accounts?environment=test&per_page=2");
      assert.equal(first.status, 200);
      const testIds = (
        await api.db.selectFrom("accounts").select("id").where("environment", "=", "test").orderBy("id").execute()
      ).map((r) => r.id);
      assert.deepEqual(
        first.body.map((x: { id: number }) => x.id),
        testIds.slice(0, 2),
      );
      assert.equal(first.headers.link, '</ops/v1/accounts?environment=test&per_page=2&page=2>; rel="next"');
      const all = await ops.get("/accounts?environment=test&per_page=500");
      assert.equal(all.headers.link, undefined);
      assert.deepEqual(all.body.map((x: { id: number }) => x.id).slice(-3), [a.id, b.id, c.id]);
      assert.ok(all.body.every((x: { environment: string }) => x.environment === "test"));
      const bad = await ops.get("/accounts?per_page=501&page=0");
      assert.equal(bad.status, 422);
      assert.deepEqual(bad.body.errors.sort(), [
        "querystring.page must be at least 1",
        "querystring.per_page must be at most 500",
      ]);
    });

    test("PATCH changes the name and the settings given, and nothing else", async () => {
      const account = await newAccount({ settings: { default_task_gap_minutes: 15 } });
      const patched = await ops.patch(`/accounts/${account.id}`, {
        company_name: "Renamed",
        settings: { bring_back_containers: true, default_task_duration_minutes: 45 },
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.company_name, "Renamed");
      assert.deepEqual(patched.body.settings, {
        bring_back_containers: true,
        default_task_gap_minutes: 15,
        default_task_duration_minutes: 45,
        recipient_phone_optional: false,
        phone_default_region: "FR",
      });
      assert.deepEqual((await ops.get(`/accounts/${account.id}`)).body, patched.body);
      assert.deepEqual((await ops.patch(`/accounts/${account.id}`, {})).body, patched.body);
    });

    test("PATCH refuses to move an account between environments, and unknown accounts are 404", async () => {
      const account = await newAccount();
      const moved = await ops.patch(`/accounts/${account.id}`, { environment: "test" });
      assert.equal(moved.status, 422);
      assert.deepEqual(moved.body, {
        errors: ["environment cannot be changed from production to test; create another account"],
      });
      assert.equal((await ops.patch(`/accounts/${account.id}`, { environment: "production" })).status, 200);
      const unknown = await ops.patch("/accounts/999999", { company_name: "X" });
      assert.deepEqual([unknown.status, unknown.body], [404, { errors: ["account 999999 not found"] }]);
      const bad = await ops.patch(`/accounts/${account.id}`, { settings: { recipient_phone_optional: "no" } });
      assert.deepEqual(bad.body, { errors: ["settings.recipient_phone_optional must be true or false"] });
    });
  });

  describe("users", () => {
    test("create, list and get; e-mails are unique whatever their case, across accounts", async () => {
      const account = await newAccount();
      const other = await newAccount();
      const created = await ops.post(`/accounts/${account.id}/users`, { email: "Anne@Shop.example", name: "Anne" });
      assert.equal(created.status, 201);
      assert.match(created.body.created_at, TIMESTAMP);
      assert.deepEqual(
        { ...created.body, created_at: undefined },
        {
          id: created.body.id,
          account_id: account.id,
          email: "Anne@Shop.example",
          name: "Anne",
          created_at: undefined,
        },
      );
      for (const [accountId, email] of [
        [account.id, "anne@shop.example"],
        [other.id, "ANNE@SHOP.EXAMPLE"],
      ] as const) {
        const taken = await ops.post(`/accounts/${accountId}/users`, { email });
        assert.deepEqual([taken.status, taken.body], [422, { errors: ["email is already used by another user"] }]);
      }
      assert.deepEqual((await ops.get(`/accounts/${account.id}/users`)).body, [created.body]);
      assert.deepEqual((await ops.get(`/accounts/${account.id}/users/${created.body.id}`)).body, created.body);
    });

    test("a user is found by e-mail whatever its case and account; an unknown one is an empty list", async () => {
      const account = await newAccount();
      const user = await newUser(account.id, "Finder@Shop.example");
      const found = await ops.get(`/users?email=${encodeURIComponent("finder@SHOP.example")}`);
      assert.equal(found.status, 200);
      assert.deepEqual(
        found.body.map((u: { id: number; account_id: number; email: string }) => [u.id, u.account_id, u.email]),
        [[user.id, account.id, "Finder@Shop.example"]],
      );
      assert.deepEqual((await ops.get("/users?email=nobody%40shop.example")).body, []);
      const invalid = await ops.get("/users?email=not-an-email");
      assert.deepEqual(
        [invalid.status, invalid.body],
        [422, { errors: ["querystring.email must be a valid e-mail address"] }],
      );
      assert.equal((await opsClient(api, null).get("/users?email=finder%40shop.example")).status, 401);
    });

    test("refuses an invalid e-mail and unknown fields", async () => {
      const account = await newAccount();
      const invalid = await ops.post(`/accounts/${account.id}/users`, { email: "not-an-email", role: "admin" });
      assert.equal(invalid.status, 422);
      assert.deepEqual(
        new Set(invalid.body.errors),
        new Set(["email must be a valid e-mail address", "role is not a known field"]),
      );
      const missing = await ops.post(`/accounts/${account.id}/users`, { name: "No mail" });
      assert.deepEqual(missing.body, { errors: ["email is required"] });
    });

    test("another account's user is 404, as is an unknown account", async () => {
      const account = await newAccount();
      const other = await newAccount();
      const user = await newUser(other.id, "someone@other.example");
      const hidden = await ops.get(`/accounts/${account.id}/users/${user.id}`);
      assert.deepEqual([hidden.status, hidden.body], [404, { errors: [`user ${user.id} not found`] }]);
      const tokens = await ops.post(`/accounts/${account.id}/users/${user.id}/tokens`);
      assert.deepEqual([tokens.status, tokens.body], [404, { errors: [`user ${user.id} not found`] }]);
      const unknown = await ops.post("/accounts/999999/users", { email: "x@y.example" });
      assert.deepEqual([unknown.status, unknown.body], [404, { errors: ["account 999999 not found"] }]);
      assert.equal((await ops.get("/accounts/999999/users")).status, 404);
    });
  });

  describe("API tokens", () => {
    test("a token is shown once, stored as its SHA-256, listed by hint, usable, and revoked for good", async () => {
      const account = await newAccount();
      const user = await newUser(account.id, "integrator@tokens.example");
      const created = await ops.post(`/accounts/${account.id}/users/${user.id}/tokens`);
      assert.equal(created.status, 201);
      assert.equal(created.headers["cache-control"], "no-store");
      const { token } = created.body as { token: string };
      assert.match(token, /^[A-Za-z0-9_-]{43}$/, "32 random bytes in base64url");
      assert.deepEqual(created.body, {
        id: created.body.id,
        user_id: user.id,
        hint: token.slice(0, 4),
        created_at: created.body.created_at,
        revoked_at: null,
        last_used_at: null,
        token,
      });

      const row = await api.db
        .selectFrom("api_tokens")
        .selectAll()
        .where("id", "=", created.body.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row.token_sha256, createHash("sha256").update(token).digest());
      assert.ok(!JSON.stringify(row).includes(token), "the token itself is not stored");

      const listed = await ops.get(`/accounts/${account.id}/users/${user.id}/tokens`);
      const { token: _shown, ...withoutToken } = created.body;
      assert.deepEqual(listed.body, [withoutToken]);
      assert.ok(!listed.body.some((t: object) => "token" in t || "token_sha256" in t));

      const headers = { "x-user-email": "INTEGRATOR@tokens.example", "x-user-token": token };
      assert.equal((await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers })).statusCode, 200);
      // Its use is recorded (in the background, after the lookup), for the console's token list.
      let used: string | null = null;
      for (let i = 0; i < 50 && used === null; i++) {
        used = (await ops.get(`/accounts/${account.id}/users/${user.id}/tokens`)).body[0].last_used_at;
        if (used === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.match(String(used), TIMESTAMP);

      const revoked = await ops.delete(`/accounts/${account.id}/users/${user.id}/tokens/${created.body.id}`);
      assert.equal(revoked.status, 200);
      assert.match(revoked.body.revoked_at, TIMESTAMP);
      assert.equal(revoked.body.token, undefined);
      const refused = await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers });
      assert.equal(refused.statusCode, 401);
      assert.deepEqual(refused.json(), { errors: ["X-User-Email or X-User-Token is invalid"] });

      const again = await ops.delete(`/accounts/${account.id}/users/${user.id}/tokens/${created.body.id}`);
      assert.deepEqual(again.body, revoked.body, "a second revocation keeps the first time");
    });

    test("each new token is different and the others keep working", async () => {
      const account = await newAccount();
      const user = await newUser(account.id, "two-tokens@tokens.example");
      const first = (await ops.post(`/accounts/${account.id}/users/${user.id}/tokens`)).body;
      const second = (await ops.post(`/accounts/${account.id}/users/${user.id}/tokens`)).body;
      assert.notEqual(first.token, second.token);
      for (const token of [first.token, second.token]) {
        const headers = { "x-user-email": "two-tokens@tokens.example", "x-user-token": token };
        assert.equal((await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers })).statusCode, 200);
      }
    });

    test("revoking another user's or an unknown token is 404", async () => {
      const account = await newAccount();
      const owner = await newUser(account.id, "owner@tokens.example");
      const other = await newUser(account.id, "other@tokens.example");
      const token = (await ops.post(`/accounts/${account.id}/users/${owner.id}/tokens`)).body;
      const wrongUser = await ops.delete(`/accounts/${account.id}/users/${other.id}/tokens/${token.id}`);
      assert.deepEqual([wrongUser.status, wrongUser.body], [404, { errors: [`token ${token.id} not found`] }]);
      const stranger = await newAccount();
      const wrongAccount = await ops.delete(`/accounts/${stranger.id}/users/${owner.id}/tokens/${token.id}`);
      assert.deepEqual([wrongAccount.status, wrongAccount.body], [404, { errors: [`user ${owner.id} not found`] }]);
      const unknown = await ops.delete(`/accounts/${account.id}/users/${owner.id}/tokens/999999`);
      assert.deepEqual(unknown.body, { errors: ["token 999999 not found"] });
      const listed = await ops.get(`/accounts/${account.id}/users/${owner.id}/tokens`);
      assert.equal(listed.body[0].revoked_at, null);
    });
  });
});
