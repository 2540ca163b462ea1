/** The operator CLI (tools/ops-cli), run as a child process against a listening app, as an operator would. */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { natsNames } from "@dos/contracts";
import { type InternalListener, listenInternal } from "@dos/service-kit";
import { runOpsCli } from "./cli-runner.ts";
import { OPS_TOKEN, startTestApi, type TestApi } from "./fixtures.ts";

describe("operator CLI (npm run ops)", () => {
  let api: TestApi;
  let baseUrl: string;
  let publicUrl: string;
  let internal: InternalListener;
  before(async () => {
    api = await startTestApi();
    await api.app.listen({ host: "127.0.0.1", port: 0 });
    publicUrl = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    internal = await listenInternal(api.app, { host: "127.0.0.1", port: 0 });
    baseUrl = internal.url;
  });
  after(async () => {
    await internal.close();
    await api.close();
  });

  const ops = (args: string[], env: Record<string, string> = {}) => runOpsCli(baseUrl, args, env);
  const ok = async (args: string[]) => {
    const run = await ops(args);
    assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
    return run;
  };

  test("the operator API answers on the internal listener only; the public one knows no /ops route", async () => {
    const authorization = `Bearer ${OPS_TOKEN}`;
    for (const path of ["/ops/v1/accounts", "/ops/v1/accounts/1", "/ops", "/ops/v1/nope", "//ops/v1/accounts"]) {
      const response = await fetch(`${publicUrl}${path}`, { headers: { authorization } });
      assert.equal(response.status, 404, path);
      assert.deepEqual(await response.json(), { errors: [`route GET ${path} not found`] });
    }
    // Percent-encoding does not make another route of it.
    assert.equal((await fetch(`${publicUrl}/%6Fps/v1/accounts`, { headers: { authorization } })).status, 404);
    assert.equal((await fetch(`${baseUrl}/ops/v1/accounts`, { headers: { authorization } })).status, 200);
    assert.equal((await fetch(`${baseUrl}/ops/v1/accounts`)).status, 401);
    // Everything else answers on both.
    for (const url of [publicUrl, baseUrl]) assert.equal((await fetch(`${url}/livez`)).status, 200);
  });

  test("help lists every operation of the operator API as a command, and a command's flags", async () => {
    const help = await ok(["help"]);
    for (const command of ["accounts create", "tokens create", "zones add", "tariffs create", "request METHOD PATH"]) {
      assert.match(help.stdout, new RegExp(command));
    }
    const one = await ok(["help", "zones", "add"]);
    assert.match(one.stdout, /Usage: npm run ops -- zones add \[flags\]\nAdd zones, or move the centroid/);
    assert.match(one.stdout, /POST \/ops\/v1\/accounts\/\{accountId\}\/zones/);
    assert.match(one.stdout, /--account ID\s+the account id \(required\)/);
    assert.match(one.stdout, /--zones POSTAL_CODE:LATITUDE:LONGITUDE,\.\.\.\s+at most 5000 items \(required\)/);
    assert.equal((await ok(["zones", "add", "--help"])).stdout, one.stdout);
  });

  test("an account set up from scratch: account, user, token, places, package types, zones", async () => {
    const account = (
      await ok([
        "accounts",
        "create",
        "--company-name",
        "CLI Shop",
        "--environment",
        "test",
        "--settings.default-task-gap-minutes",
        "15",
        "--settings.bring-back-containers",
      ])
    ).json();
    assert.equal(account.company_name, "CLI Shop");
    assert.equal(account.environment, "test");
    assert.deepEqual([account.settings.default_task_gap_minutes, account.settings.bring_back_containers], [15, true]);
    const a = String(account.id);

    const updated = (
      await ok([
        "accounts",
        "update",
        "--account",
        a,
        "--settings.phone-default-region",
        "BE",
        "--no-settings.bring-back-containers",
      ])
    ).json();
    assert.deepEqual([updated.settings.phone_default_region, updated.settings.bring_back_containers], ["BE", false]);

    const user = (await ok(["users", "create", "--account", a, "--email", "cli@shop.example", "--name", "Cli"])).json();
    const tokenRun = await ok(["tokens", "create", "--account", a, "--user", String(user.id)]);
    assert.match(tokenRun.stderr, /store the secret in this answer now; it is not shown again/);
    const { token } = tokenRun.json();
    const headers = { "x-user-email": "cli@shop.example", "x-user-token": token };
    assert.equal((await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers })).statusCode, 200);
    const limit = (json: string) => ["accounts", "update", "--account", a, "--rate-limit", json];
    const limited = (await ok(limit('{"quota": 600, "window_seconds": 60}'))).json();
    assert.deepEqual(limited.rate_limit, { quota: 600, window_seconds: 60 });
    const limitedAnswer = await api.app.inject({ method: "GET", url: "/api/v2/package_types", headers });
    assert.equal(limitedAnswer.headers["ratelimit-policy"], `"account";q=600;w=60`);
    const tooLong = await ops(limit('{"quota": 600, "window_seconds": 7200}'));
    assert.equal(tooLong.code, 1);
    assert.match(tooLong.stderr, /rate_limit\.window_seconds must be at most 3600/);
    assert.equal((await ok(limit(""))).json().rate_limit, null, '"" is null: the default applies again');
    const listed = (await ok(["tokens", "list", "--account", a, "--user", String(user.id)])).json();
    assert.equal(listed[0].hint, token.slice(0, 4));
    assert.ok(!tokenRun.stdout.includes("token_sha256") && !JSON.stringify(listed).includes(token));

    const zones = (
      await ok([
        "zones",
        "add",
        "--account",
        a,
        "--zones",
        "75001:48.8626:2.3363,75002:48.8686:2.3428,75003:48.86:2.36",
      ])
    ).json();
    assert.deepEqual(
      zones.map((z: { postal_code: string }) => z.postal_code),
      ["75001", "75002", "75003"],
    );
    assert.deepEqual((await ok(["zones", "remove", "--account", a, "--postal-codes", "75003"])).json().length, 2);
    const replaced = (
      await ok([
        "zones",
        "set",
        "--account",
        a,
        "--zones",
        '[{"postal_code": "75001", "latitude": 48.86, "longitude": 2.34}, {"postal_code": "75004", "latitude": 48.85, "longitude": 2.36}]',
      ])
    ).json();
    assert.deepEqual(replaced, [
      { postal_code: "75001", latitude: 48.86, longitude: 2.34 },
      { postal_code: "75004", latitude: 48.85, longitude: 2.36 },
    ]);

    const place = (
      await ok([
        "places",
        "set-default",
        "--account",
        a,
        "--recipient-name",
        "Warehouse",
        "--address",
        "10 Rue de Rivoli",
        "--postal-code",
        "75004",
        "--city",
        "Paris",
        "--recipient-phone",
        "+32 2 123 45 67",
        "--latitude",
        "48.855",
        "--longitude",
        "2.36",
      ])
    ).json();
    assert.deepEqual([place.recipient_phone, place.latitude], ["+32 2 123 45 67", 48.855]);
    assert.equal((await ok(["places", "get-default", "--account", a])).json().id, place.id);

    const address = (
      await ok([
        "addresses",
        "create",
        "--account",
        a,
        "--recipient-name",
        "Jeanne",
        "--address",
        "3 Rue du Louvre",
        "--postal-code",
        "75001",
        "--city",
        "Paris",
        "--recipient-phone",
        "0470 12 34 56",
        "--address-instructions",
        "Code 12",
      ])
    ).json();
    assert.equal(address.recipient_phone, "+32 470 12 34 56", "national numbers read in the account's region");
    const id = String(address.id);
    const cleared = (
      await ok(["addresses", "update", "--account", a, "--address-id", id, "--address-instructions", ""])
    ).json();
    assert.equal(cleared.address_instructions, null);
    assert.equal((await ok(["addresses", "list", "--account", a])).json().length, 1);
    const deleted = await ok(["addresses", "delete", "--account", a, "--address-id", id]);
    assert.equal(deleted.stdout, "");
    assert.match(deleted.stderr, /done \(204\)/);

    const type = (
      await ok([
        "package-types",
        "create",
        "--account",
        a,
        "--name",
        "Size M",
        "--volume-dm3",
        "40",
        "--weight-kg",
        "8",
        "--is-size-category",
        "--fragility",
        "fragile",
      ])
    ).json();
    assert.deepEqual([type.is_size_category, type.fragility, type.volume_dm3], [true, "fragile", 40]);
    const typeId = String(type.id);
    assert.notEqual(
      (await ok(["package-types", "archive", "--account", a, "--package-type", typeId])).json().archived_at,
      null,
    );
    assert.deepEqual((await ok(["package-types", "list", "--account", a])).json(), []);
    assert.equal((await ok(["package-types", "list", "--account", a, "--include-archived"])).json().length, 1);
    assert.equal(
      (await ok(["package-types", "update", "--account", a, "--package-type", typeId, "--no-archived"])).json()
        .archived_at,
      null,
    );

    const raw = (await ok(["request", "GET", `/accounts/${a}/zones`])).json();
    assert.deepEqual(raw, replaced);
  });

  test("usage errors name the flag and exit 2", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["accounts", "create", "--compny", "X"], /unknown flag --compny for 'accounts create'/],
      [["accounts", "create"], /--company-name is required \(at most 255 characters\)/],
      [["accounts", "create", "--company-name"], /--company-name needs a value/],
      [
        ["accounts", "create", "--company-name", "X", "--environment", "staging"],
        /--environment must be one of production, test \(got 'staging'\)/,
      ],
      [["accounts", "get", "--account", "1", "--account", "2"], /--account is given twice/],
      [["accounts", "get", "--account", "1", "extra"], /unexpected argument 'extra'/],
      [
        ["accounts", "create", "--company-name", "X", "--settings.bring-back-containers=maybe"],
        /--settings\.bring-back-containers takes no value: give --settings\.bring-back-containers or --no-settings/,
      ],
      [
        ["accounts", "create", "--company-name", "X", "--settings.default-task-gap-minutes", "soon"],
        /--settings\.default-task-gap-minutes must be an integer \(got 'soon'\)/,
      ],
      [
        ["zones", "add", "--account", "1", "--zones", "75001:48.8"],
        /--zones: '75001:48\.8' must be POSTAL_CODE:LATITUDE:LONGITUDE \(or give a JSON array\)/,
      ],
      [["zones", "add", "--account", "1"], /--zones is required/],
      [
        ["accounts", "delete"],
        /'accounts' needs one of: create, list, get, update \(got 'delete'\)\nrun `npm run ops -- help` for usage\n$/,
      ],
      [["drones", "list"], /unknown command 'drones'\nrun `npm run ops -- help` for usage\n$/],
      [
        ["accounts", "get"],
        /--account is required \(the account id\)\nrun `npm run ops -- help accounts get` for usage\n$/,
      ],
      [["tariffs", "create", "--account", "1", "--json", "{nope"], /--json is not valid JSON/],
      [["request", "FETCH", "/accounts"], /request needs a method first/],
    ];
    for (const [args, message] of cases) {
      const run = await ops(args);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stdout, "");
    }
  });

  test("a refusal by the API prints its errors and exits 1", async () => {
    const account = (await ok(["accounts", "create", "--company-name", "Refusals"])).json();
    await ok(["users", "create", "--account", String(account.id), "--email", "taken@shop.example"]);
    const taken = await ops(["users", "create", "--account", String(account.id), "--email", "TAKEN@shop.example"]);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /answered 422:\n {2}- email is already used by another user\n/);
    const missing = await ops(["accounts", "get", "--account", "999999"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /answered 404:\n {2}- account 999999 not found/);
    const wrongToken = await ops(["accounts", "list"], { OPS_TOKEN: "wrong-token-wrong-token-wrong-token" });
    assert.equal(wrongToken.code, 1);
    assert.match(wrongToken.stderr, /answered 401:\n {2}- Authorization: Bearer <operator token> is required/);
  });

  test("a personal staff token works as OPS_TOKEN: the commands run as the person, with their role, audited", async () => {
    const person = (
      await ok(["staff", "create", "--email", "cli-person@operator.example", "--name", "Clia", "--role", "read_only"])
    ).json();
    const minted = await ok(["staff", "create-token", "--staff", String(person.id), "--label", "console session 1"]);
    assert.match(minted.stderr, /store the secret in this answer now/);
    const asPerson = (args: string[]) => ops(args, { OPS_TOKEN: minted.json().token });
    const personal = await asPerson(["staff", "create-my-token", "--label", "laptop CLI"]);
    assert.equal(personal.code, 0, personal.stderr);
    const cli = (args: string[]) => ops(args, { OPS_TOKEN: personal.json().token });

    const me = await cli(["staff", "me"]);
    assert.equal(me.code, 0, me.stderr);
    assert.deepEqual(me.json(), {
      kind: "staff",
      id: person.id,
      email: "cli-person@operator.example",
      name: "Clia",
      role: "read_only",
    });
    assert.equal((await cli(["vehicles", "list"])).code, 0);
    const refused = await cli(["messengers", "create", "--name", "Paul"]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /answered 403:\n {2}- read_only may not POST \/ops\/v1\/messengers\n/);
    const mine = await cli(["audit", "list", "--actor-id", String(person.id)]);
    assert.deepEqual(
      mine.json().entries.map((e: { method: string; route: string; status_code: number }) => [e.route, e.status_code]),
      [
        ["/ops/v1/messengers", 403],
        ["/ops/v1/staff/me/tokens", 201],
      ],
    );

    await ok(["staff", "update", "--staff", String(person.id), "--disabled"]);
    const disabled = await cli(["staff", "me"]);
    assert.equal(disabled.code, 1);
    assert.match(disabled.stderr, /answered 401:[\s\S]*a live personal staff token/);
  });

  test("tariffs pass through to the pricing service, and an unknown account never reaches it", async () => {
    const account = (await ok(["accounts", "create", "--company-name", "Priced"])).json();
    const asked: Array<Record<string, unknown>> = [];
    const subject = natsNames(api.config.NATS_NAMESPACE).subjects.pricingTariffsCreate;
    // A stand-in for pricing on the real bus: it stores nothing and answers the tariff it was given.
    const sub = api.nats.nc.subscribe(subject, {
      callback: (_error, msg) => {
        const request = msg.json<Record<string, unknown>>();
        asked.push(request);
        const { account_id, base_cents, minimum_cents } = request;
        msg.respond(
          JSON.stringify({
            id: 1,
            account_id,
            effective_from: "2030-01-01T00:00:00.000+00:00",
            base_cents,
            per_package_cents: 0,
            weight_bands: [],
            volume_bands: [],
            slot_surcharges: [],
            lead_time_surcharges: [],
            minimum_cents,
            note: null,
            created_at: "2029-12-31T00:00:00.000+00:00",
          }),
        );
      },
    });
    try {
      const file = join(mkdtempSync(join(tmpdir(), "ops-cli-")), "tariff.json");
      writeFileSync(
        file,
        JSON.stringify({ base_cents: { outbound: 900, inbound: 1000, other: 1200 }, minimum_cents: 500 }),
      );
      const created = (await ok(["tariffs", "create", "--account", String(account.id), "--file", file])).json();
      assert.deepEqual(
        [created.account_id, created.base_cents.outbound, created.minimum_cents],
        [account.id, 900, 500],
      );
      assert.equal(asked[0]?.account_id, account.id);

      const refused = await ops(["tariffs", "create", "--account", String(account.id), "--json", '{"base_cents": {}}']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /answered 422:\n {2}- base_cents\.outbound is required/);
      const unknown = await ops(["tariffs", "list", "--account", "999999"]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /answered 404:\n {2}- account 999999 not found/);
      assert.equal(asked.length, 1, "refused requests never reach pricing");
    } finally {
      sub.unsubscribe();
    }
  });

  test("an unreachable API exits 3 and says where it looked", async () => {
    const run = await ops(["accounts", "list"], { OPS_API_URL: "http://127.0.0.1:39" });
    assert.equal(run.code, 3);
    assert.match(run.stderr, /cannot reach the operator API at http:\/\/127\.0\.0\.1:39 \(ECONNREFUSED\)/);
  });
});
