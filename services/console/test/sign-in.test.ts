/**
 * People sign in, over HTTP as a browser would (cookies, CSRF header): invitations, passwords,
 * sessions and their ends, throttling, resets; and the refusals a stranger meets.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { clientHeaders, outboundDelivery, seedAccounts } from "../../../e2e/src/client.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { Browser } from "./http-browser.ts";

let bed: ConsoleBed;
before(async () => {
  bed = await startConsoleBed();
});
after(async () => bed?.close());

const tokenOf = (link: string) => new URL(link).hash.replace("#token=", "");
const PASSWORD = "correct horse battery staple";

async function invitedUser(environment: "production" | "test" = "production") {
  const user = await bed.newAccountUser(environment);
  const invited = await bed.invite(user.email);
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  const link = await bed.lastLinkTo(user.email);
  return { ...user, link, token: tokenOf(link) };
}

async function signedInUser() {
  const user = await invitedUser();
  const browser = new Browser(bed.url);
  await browser.open();
  const accepted = await browser.call("POST", "/api/invitations/accept", { token: user.token, password: PASSWORD });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  return { user, browser };
}

describe("invitations", () => {
  test("the operator invites an API user; the e-mailed link sets the password and signs in, once", async () => {
    const user = await invitedUser();
    const { link } = user;
    assert.match(link, /^http:\/\/localhost:\d+\/invitation#token=[A-Za-z0-9_-]{43}$/);
    const browser = new Browser(bed.url);
    await browser.open();
    const accepted = await browser.call("POST", "/api/invitations/accept", { token: user.token, password: PASSWORD });
    assert.equal(accepted.status, 200);
    assert.deepEqual(accepted.body.user.email, user.email);
    assert.equal(accepted.body.user.account.id, user.accountId);
    const me = await browser.open();
    assert.equal(me.body.signed_in, true);

    const again = await new Browser(bed.url).open().then(async () => {
      const b = new Browser(bed.url);
      await b.open();
      return b.call("POST", "/api/invitations/accept", { token: user.token, password: "another long password" });
    });
    assert.deepEqual(
      [again.status, again.body],
      [410, { errors: ["invitation link has expired or was already used"] }],
    );
  });

  test("an expired invitation is refused, and a new one retires the old", async () => {
    const user = await invitedUser();
    const db = new pg.Client({ connectionString: bed.system.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query("update console.one_time_links set expires_at = now() - interval '1 second'");
    } finally {
      await db.end();
    }
    const browser = new Browser(bed.url);
    await browser.open();
    const expired = await browser.call("POST", "/api/invitations/accept", { token: user.token, password: PASSWORD });
    assert.deepEqual(
      [expired.status, expired.body],
      [410, { errors: ["invitation link has expired or was already used"] }],
    );

    await bed.invite(user.email);
    const first = tokenOf(await bed.lastLinkTo(user.email));
    await bed.invite(user.email);
    const second = tokenOf(await bed.lastLinkTo(user.email));
    assert.equal(
      (await browser.call("POST", "/api/invitations/accept", { token: first, password: PASSWORD })).status,
      410,
    );
    assert.equal(
      (await browser.call("POST", "/api/invitations/accept", { token: second, password: PASSWORD })).status,
      200,
    );
  });

  test("a short password is refused beside its field and leaves the link usable", async () => {
    const user = await invitedUser();
    const browser = new Browser(bed.url);
    await browser.open();
    const short = await browser.call("POST", "/api/invitations/accept", { token: user.token, password: "short" });
    assert.deepEqual([short.status, short.body], [422, { errors: ["password must be at least 12 characters"] }]);
    assert.equal(
      (await browser.call("POST", "/api/invitations/accept", { token: user.token, password: PASSWORD })).status,
      200,
    );
  });

  test("only an API user can be invited, only by the operator, only on the internal listener", async () => {
    const unknown = await bed.invite("nobody@shop.example");
    assert.deepEqual(
      [unknown.status, unknown.body],
      [404, { errors: ["user with e-mail nobody@shop.example not found"] }],
    );
    const stranger = await fetch(`${bed.internalUrl}/ops/console/v1/invitations`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer not-the-operator-token-0123456789" },
      body: JSON.stringify({ email: "x@shop.example" }),
    });
    assert.equal(stranger.status, 401);
    const publicPort = await fetch(`${bed.url}/ops/console/v1/invitations`, { method: "POST" });
    assert.equal(publicPort.status, 404);
  });
});

describe("sessions", () => {
  test("the cookies are HttpOnly and SameSite=Strict; the session cookie expires with the session", async () => {
    const user = await invitedUser();
    const response = await fetch(`${bed.url}/api/session`);
    const csrfCookie = response.headers.getSetCookie().find((c) => c.startsWith("console_csrf="));
    assert.ok(csrfCookie);
    assert.match(csrfCookie, /HttpOnly/);
    assert.match(csrfCookie, /SameSite=Strict/);
    const csrf = ((await response.json()) as { csrf_token: string }).csrf_token;
    const accepted = await fetch(`${bed.url}/api/invitations/accept`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf, cookie: `console_csrf=${csrf}` },
      body: JSON.stringify({ token: user.token, password: PASSWORD }),
    });
    const session = accepted.headers.getSetCookie().find((c) => c.startsWith("console_session="));
    assert.ok(session);
    assert.match(session, /HttpOnly/);
    assert.match(session, /SameSite=Strict/);
    assert.match(session, /Expires=/);
  });

  test("a change without the CSRF token, or with another, is refused with 403 and changes nothing", async () => {
    const { browser } = await signedInUser();
    const without = await browser.call("DELETE", "/api/session", undefined, { csrf: false });
    assert.deepEqual(
      [without.status, without.body],
      [403, { errors: ["X-CSRF-Token header is missing or does not match"] }],
    );
    browser.csrf = "forged-token";
    assert.equal((await browser.call("DELETE", "/api/session")).status, 403);
    assert.equal((await browser.open()).body.signed_in, true, "still signed in");
    const signInWithout = await new Browser(bed.url).call("POST", "/api/session", {
      email: "a@b.example",
      password: "x",
    });
    assert.equal(signInWithout.status, 403);
  });

  test("sign out ends this session; sign out everywhere ends all of the person's sessions", async () => {
    const { user, browser } = await signedInUser();
    const second = new Browser(bed.url);
    await second.open();
    assert.equal((await second.call("POST", "/api/session", { email: user.email, password: PASSWORD })).status, 200);
    const third = new Browser(bed.url);
    await third.open();
    assert.equal((await third.call("POST", "/api/session", { email: user.email, password: PASSWORD })).status, 200);

    assert.equal((await browser.call("DELETE", "/api/session")).status, 204);
    assert.equal((await browser.open()).body.signed_in, false);
    assert.equal((await second.open()).body.signed_in, true);

    assert.equal((await second.call("DELETE", "/api/sessions")).status, 204);
    assert.equal((await second.open()).body.signed_in, false);
    assert.equal((await third.open()).body.signed_in, false);
    const gone = await third.call("GET", "/api/v2/deliveries");
    assert.deepEqual(
      [gone.status, gone.body],
      [401, { errors: ["sign in first: the session is missing or has ended"] }],
    );
  });

  test("a session calls the client API as its user, and its API token is revoked when it ends", async () => {
    const { user, browser } = await signedInUser();
    const listed = await browser.call("GET", "/api/v2/deliveries");
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.ok(listed.headers.get("ratelimit-policy"), "the client API's own rate limit applies");
    const tokens = async () =>
      (
        await bed.ops<Array<{ revoked_at: string | null }>>(
          "GET",
          `/accounts/${user.accountId}/users/${user.userId}/tokens`,
        )
      ).body;
    assert.equal((await tokens()).filter((t) => t.revoked_at === null).length, 1);
    await browser.call("DELETE", "/api/session");
    for (let i = 0; i < 50 && (await tokens()).some((t) => t.revoked_at === null); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(
      (await tokens()).filter((t) => t.revoked_at === null),
      [],
    );
  });

  test("the client API's paths only: dots or encoded separators cannot leave /api/v2", async () => {
    const { browser } = await signedInUser();
    for (const path of [
      "/api/v2/../../track/x",
      "/api/v2/%2e%2e/%2e%2e/track/x",
      "/api/v2/deliveries%2f..%2f..%2fops",
      "/api/v2/..%5c..%5ctrack",
    ]) {
      const answer = await browser.getAsWritten(path);
      assert.equal(answer.status, 404, path);
      assert.ok(Array.isArray(JSON.parse(answer.body).errors), path);
    }
  });

  test("signing in again and again keeps at most 10 sessions, each with its API token", async () => {
    const { user } = await signedInUser();
    const browsers: Browser[] = [];
    for (let i = 0; i < 12; i++) {
      const b = new Browser(bed.url);
      await b.open();
      assert.equal((await b.call("POST", "/api/session", { email: user.email, password: PASSWORD })).status, 200);
      browsers.push(b);
    }
    const live = await Promise.all(browsers.map(async (b) => (await b.open()).body.signed_in as boolean));
    assert.deepEqual(live, [false, false, ...Array(10).fill(true)], "the oldest sessions ended");
    const active = async () =>
      (
        await bed.ops<Array<{ revoked_at: string | null }>>(
          "GET",
          `/accounts/${user.accountId}/users/${user.userId}/tokens`,
        )
      ).body.filter((t) => t.revoked_at === null).length;
    for (let i = 0; i < 50 && (await active()) > 10; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await active(), 10);
  });

  test("another account's delivery is not found through the console", async () => {
    const { browser } = await signedInUser();
    const other = await bed.newAccountUser();
    const created = await bed.ops<{ id: number }>("POST", `/accounts/${other.accountId}/users/${other.userId}/tokens`);
    assert.equal(created.status, 201);
    const foreign = await browser.call("GET", "/api/v2/deliveries/1");
    assert.equal(foreign.status, 404);
    // The map's live position too: the delivery is read as the person first, so it is the same 404.
    const live = await browser.call("GET", "/api/deliveries/1/live");
    assert.equal(live.status, 404);
    assert.deepEqual(live.body, { errors: ["delivery 1 not found"] });
    assert.equal((await browser.call("GET", "/api/deliveries/1e0/live")).status, 404);
    assert.equal((await fetch(`${bed.pageUrl}/api/deliveries/1/live`)).status, 401, "no session, no position");
  });

  test("the map's offline style is the console's own, with no tile, and is the one the page is told to load", async () => {
    const { browser } = await signedInUser();
    assert.deepEqual((await browser.call("GET", "/api/map")).body, { style_url: "/map/style.json" });
    const style = await fetch(`${bed.pageUrl}/map/style.json`);
    assert.equal(style.status, 200);
    const body = (await style.json()) as { version: number; sources: object; layers: Array<{ type: string }> };
    assert.equal(body.version, 8);
    assert.deepEqual(body.sources, {}, "no source: nothing fetched from a tile server");
    assert.deepEqual(
      body.layers.map((layer) => layer.type),
      ["background"],
    );
  });
});

describe("the account's API tokens", () => {
  test("only the person's own tokens are listed and revocable; the session's own token is neither", async () => {
    const { user, browser } = await signedInUser();
    assert.deepEqual((await browser.call("GET", "/api/tokens")).body, [], "the session's token is not listed");
    const created = await browser.call("POST", "/api/tokens");
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("cache-control"), "no-store");
    assert.match(created.body.token, /^[A-Za-z0-9_-]{43}$/);
    const listed = await browser.call("GET", "/api/tokens");
    assert.deepEqual(
      listed.body.map((t: { id: number; hint: string }) => [t.id, t.hint]),
      [[created.body.id, created.body.token.slice(0, 4)]],
    );
    const all = await bed.ops<Array<{ id: number }>>("GET", `/accounts/${user.accountId}/users/${user.userId}/tokens`);
    const sessionToken = all.body.find((t) => t.id !== created.body.id);
    assert.ok(sessionToken);
    const theSessions = await browser.call("DELETE", `/api/tokens/${sessionToken.id}`);
    assert.deepEqual([theSessions.status, theSessions.body], [404, { errors: [`token ${sessionToken.id} not found`] }]);
    const other = await bed.newAccountUser();
    const foreign = await bed.ops<{ id: number }>("POST", `/accounts/${other.accountId}/users/${other.userId}/tokens`);
    assert.equal((await browser.call("DELETE", `/api/tokens/${foreign.body.id}`)).status, 404);
    assert.equal((await browser.call("DELETE", "/api/tokens/not-a-number")).status, 404);
    assert.equal((await browser.call("DELETE", `/api/tokens/${created.body.id}`)).status, 204);
    assert.deepEqual((await browser.call("GET", "/api/tokens")).body, []);
    assert.equal((await browser.open()).body.signed_in, true, "the session still works");
  });

  test("the account page's data is the session's account", async () => {
    const { user, browser } = await signedInUser();
    const account = await browser.call("GET", "/api/account");
    assert.equal(account.status, 200);
    assert.deepEqual(account.body, {
      company_name: account.body.company_name,
      environment: "production",
      default_place: null,
      saved_addresses: [],
      zones: [],
    });
    assert.match(account.body.company_name, /^Fleurs/);
    assert.equal((await new Browser(bed.url).call("GET", "/api/account")).status, 401);
    assert.ok(user.accountId);
  });
});

describe("billing", () => {
  test("the month's statement of the session's account, its totals those of SQL, and its CSV defused", async () => {
    const [shop, testShop] = seedAccounts(bed.system);
    assert.ok(shop && testShop);
    const browser = new Browser(bed.url);
    await browser.open();
    await bed.invite(shop.email);
    const accepted = await browser.call("POST", "/api/invitations/accept", {
      token: tokenOf(await bed.lastLinkTo(shop.email)),
      password: PASSWORD,
    });
    assert.equal(accepted.status, 200);
    const api = bed.system.url("delivery-api");
    const create = async (reference: string) => {
      const answer = await fetch(`${api}/api/v2/deliveries`, {
        method: "POST",
        headers: { ...clientHeaders(shop), "content-type": "application/json" },
        body: JSON.stringify(outboundDelivery(shop, reference)),
      });
      assert.equal(answer.status, 201);
      return ((await answer.json()) as { id: number }).id;
    };
    const delivered = await create('=HYPERLINK("http://evil.example")');
    const failed = await create("ORDER-2");
    const db = new pg.Client({ connectionString: bed.system.env.DATABASE_URL });
    await db.connect();
    try {
      for (const [id, status, price] of [
        [delivered, "delivered", 1234],
        [failed, "failed", 999],
      ] as const) {
        await db.query("update delivery.deliveries set status = $2, price_cents = $3 where id = $1", [
          id,
          status,
          price,
        ]);
        await db.query(
          "update delivery.tasks set slot_starting_at = '2031-03-10T10:00:00Z', slot_ending_at = '2031-03-10T12:00:00Z' where delivery_id = $1",
          [id],
        );
      }
      const sum = await db.query(
        "select sum(price_cents)::int as total from delivery.deliveries where account_id = $1 and status in ('delivered', 'failed') and id = any($2)",
        [shop.account_id, [delivered, failed]],
      );
      const statement = await browser.call("GET", "/api/statement?month=2031-03");
      assert.equal(statement.status, 200, JSON.stringify(statement.body));
      assert.equal(statement.body.totals.billed_cents, sum.rows[0].total);
      assert.deepEqual(statement.body.deliveries.map((d: { id: number }) => d.id).sort(), [delivered, failed].sort());
    } finally {
      await db.end();
    }
    const csv = await browser.call("GET", "/api/statement.csv?month=2031-03");
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get("content-type") ?? "", /^text\/csv/);
    assert.match(csv.body, /"'=HYPERLINK\(""http:\/\/evil.example""\)"/, "a formula is defused");
    assert.match(csv.body, /"total","","2 deliveries","","","22.33"/);
    const bad = await browser.call("GET", "/api/statement?month=2031-3");
    assert.equal(bad.status, 422);
    assert.equal((await new Browser(bed.url).call("GET", "/api/statement?month=2031-03")).status, 401);
  });
});

describe("sign-in throttling", () => {
  test("the sixth wrong password in a minute is refused with 429 before any check, even a right one", async () => {
    const { user } = await signedInUser();
    const browser = new Browser(bed.url);
    await browser.open();
    for (let i = 0; i < 5; i++) {
      const wrong = await browser.call("POST", "/api/session", { email: user.email, password: `wrong password ${i}` });
      assert.deepEqual([wrong.status, wrong.body], [401, { errors: ["e-mail or password is wrong"] }]);
    }
    const sixth = await browser.call("POST", "/api/session", { email: user.email, password: PASSWORD });
    assert.deepEqual([sixth.status, sixth.body], [429, { errors: ["too many failed sign-ins, try again later"] }]);
    assert.equal(sixth.headers.get("retry-after"), "60");
  });
});

describe("password reset", () => {
  test("a reset link e-mailed to the person sets a new password and ends every other session", async () => {
    const { user, browser } = await signedInUser();
    const anonymous = new Browser(bed.url);
    await anonymous.open();
    const asked = await anonymous.call("POST", "/api/password-resets", { email: user.email });
    assert.equal(asked.status, 202);
    const unknown = await anonymous.call("POST", "/api/password-resets", { email: "nobody@shop.example" });
    assert.deepEqual([unknown.status, unknown.body], [asked.status, asked.body], "the same answer for a stranger");
    const link = await bed.lastLinkTo(user.email);
    assert.match(link, /\/password-reset\/new#token=/);
    const reset = await anonymous.call("POST", "/api/password-resets/complete", {
      token: tokenOf(link),
      password: "a brand new pass phrase",
    });
    assert.equal(reset.status, 200);
    assert.equal((await browser.open()).body.signed_in, false, "the older session ended");
    assert.equal((await anonymous.open()).body.signed_in, true);
    const old = new Browser(bed.url);
    await old.open();
    assert.equal((await old.call("POST", "/api/session", { email: user.email, password: PASSWORD })).status, 401);
  });
});

describe("bad input", () => {
  test("oversized, malformed or unknown bodies are precise 4xx in the error shape", async () => {
    const browser = new Browser(bed.url);
    await browser.open();
    const huge = await browser.call("POST", "/api/session", { email: "a@b.example", password: "x".repeat(100_000) });
    assert.deepEqual([huge.status, huge.body], [413, { errors: ["body must be at most 65536 bytes"] }]);
    const long = await browser.call("POST", "/api/session", { email: "a@b.example", password: "x".repeat(200) });
    assert.equal(long.status, 422);
    const extra = await browser.call("POST", "/api/session", { email: "a@b.example", password: "x", admin: true });
    assert.deepEqual(extra.body, { errors: ["admin is not a known field"] });
    const notJson = await browser.call("POST", "/api/session", "{nope");
    assert.deepEqual([notJson.status, notJson.body], [400, { errors: ["body is not valid JSON"] }]);
    const hugeToken = await browser.call("POST", "/api/invitations/accept", {
      token: "t".repeat(5000),
      password: PASSWORD,
    });
    assert.equal(hugeToken.status, 422);
    const unknownApi = await browser.call("GET", "/api/nothing");
    assert.equal(unknownApi.status, 404);
  });
});

// Last: the flood uses up the address's quota, which every other test shares (all come from 127.0.0.1).
describe("sign-in floods", () => {
  test("a flood of guesses over many e-mails from one address is cut at the address's quota", async () => {
    const browser = new Browser(bed.url);
    await browser.open();
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) {
      answers.push(
        (await browser.call("POST", "/api/session", { email: `guess${i}@shop.example`, password: "123456789012" }))
          .status,
      );
    }
    // The quota (20) is shared with the other tests' failures from this address: the cut comes at 20 or before.
    const firstRefusal = answers.indexOf(429);
    assert.ok(firstRefusal > 0 && firstRefusal <= 20, `first 429 at ${firstRefusal}: ${answers}`);
    assert.ok(answers.slice(firstRefusal).every((s) => s === 429));
  });
});
