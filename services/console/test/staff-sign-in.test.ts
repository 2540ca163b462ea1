/**
 * The operator's staff sign in to the console, over HTTP as a browser would (cookies, CSRF
 * header), against the real delivery-api: invitations, enrolment of an authenticator app, the
 * two-step sign-in and its throttling, staff sessions and their staff tokens, the operator API
 * forwarded for staff sessions only, and the demo seed's credentials. Passkeys are used in
 * Chromium (staff-journey.test.ts): they need an authenticator.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import pg from "pg";
import { OPS_TOKEN } from "../../../e2e/src/system.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { Browser } from "./http-browser.ts";
import { codeAt, codeOf, wrongCode } from "./totp-codes.ts";

/** Wrong second factors per person per hour, low enough to reach in a test. */
const FACTOR_FAILURES_PER_HOUR = 6;

let bed: ConsoleBed;
let db: pg.Client;
before(async () => {
  bed = await startConsoleBed({
    CONSOLE_STAFF_FACTOR_FAILURES_PER_HOUR: String(FACTOR_FAILURES_PER_HOUR),
    // Every request of this file comes from one address: its limit is the shop tests' to check.
    CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: "100000",
  });
  db = new pg.Client({ connectionString: bed.system.env.DATABASE_URL });
  await db.connect();
});
after(async () => {
  await db?.end();
  await bed?.close();
});

const PASSWORD = "correct horse battery staple";
const tokenOf = (link: string) => new URL(link).hash.replace("#token=", "");

async function invitedStaff(role: "admin" | "dispatcher" | "read_only" = "dispatcher") {
  const staff = await bed.newStaff(role);
  const invited = await bed.inviteStaff(staff.email);
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  const link = await bed.lastLinkTo(staff.email);
  return { ...staff, link, token: tokenOf(link) };
}

/** A staff person who accepted the invitation and enrolled an authenticator app: signed in. */
async function enrolledStaff(role: "admin" | "dispatcher" | "read_only" = "dispatcher") {
  const staff = await invitedStaff(role);
  const browser = new Browser(bed.url);
  await browser.open();
  const accepted = await browser.call("POST", "/api/staff/invitations/accept", {
    token: staff.token,
    password: PASSWORD,
  });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const offered = await browser.call("POST", "/api/staff/enrolment/totp");
  assert.equal(offered.status, 200, JSON.stringify(offered.body));
  const secret = offered.body.secret as string;
  const enrolmentCode = codeOf(secret);
  const confirmed = await browser.call("POST", "/api/staff/enrolment/totp/confirm", { code: enrolmentCode });
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
  return { staff, browser, secret, enrolmentCode };
}

/** Step one in a new browser: the password. */
async function passwordStep(email: string, password = PASSWORD) {
  const browser = new Browser(bed.url);
  await browser.open();
  const answer = await browser.call("POST", "/api/staff/sign-in", { email, password });
  return { browser, answer };
}

async function sessionsOf(staffId: number) {
  const { rows } = await db.query<{ id: number; api_token_id: number }>(
    "select id::int, api_token_id::int from console.sessions where staff_id = $1 order by id",
    [staffId],
  );
  return rows;
}

async function asStaffToken(token: string, route: string) {
  return fetch(`${bed.system.opsUrl}/ops/v1${route}`, { headers: { authorization: `Bearer ${token}` } });
}

/** The ids of the person's live staff tokens in delivery-api (revoked and expired ones are not listed). */
async function liveTokenIds(staffId: number): Promise<number[]> {
  const answer = await bed.ops<{ tokens: Array<{ id: number }> }>("GET", `/staff/${staffId}/tokens?per_page=500`);
  assert.equal(answer.status, 200);
  return answer.body.tokens.map((token) => token.id);
}

describe("staff invitations and enrolment", () => {
  test("only a staff person of delivery-api can be invited, only by the operator, on the internal listener", async () => {
    const unknown = await bed.inviteStaff("nobody@operator.example");
    assert.deepEqual(
      [unknown.status, unknown.body],
      [404, { errors: ["staff member with e-mail nobody@operator.example not found"] }],
    );
    const staff = await bed.newStaff("read_only");
    assert.equal((await bed.ops("PATCH", `/staff/${staff.id}`, { disabled: true })).status, 200);
    const disabled = await bed.inviteStaff(staff.email);
    assert.deepEqual([disabled.status, disabled.body], [409, { errors: [`staff member ${staff.email} is disabled`] }]);
    const stranger = await fetch(`${bed.internalUrl}/ops/console/v1/staff/invitations`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer not-the-operator-token-0123456789" },
      body: JSON.stringify({ email: staff.email }),
    });
    assert.equal(stranger.status, 401);
    assert.equal((await fetch(`${bed.url}/ops/console/v1/staff/invitations`, { method: "POST" })).status, 404);
  });

  test("the link sets the password once (a refused password leaves it usable) and opens the enrolment", async () => {
    const staff = await invitedStaff();
    assert.match(staff.link, /^http:\/\/localhost:\d+\/staff\/invitation#token=[A-Za-z0-9_-]{43}$/);
    const browser = new Browser(bed.url);
    await browser.open();
    const short = await browser.call("POST", "/api/staff/invitations/accept", {
      token: staff.token,
      password: "short",
    });
    assert.deepEqual([short.status, short.body], [422, { errors: ["password must be at least 12 characters"] }]);
    const accepted = await browser.call("POST", "/api/staff/invitations/accept", {
      token: staff.token,
      password: PASSWORD,
    });
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.email, staff.email);
    const enrolment = await browser.call("GET", "/api/staff/enrolment");
    assert.equal(enrolment.body.email, staff.email);
    // No session before a second factor is enrolled, and the link is spent.
    assert.equal((await browser.call("GET", "/api/staff/session")).body.signed_in, false);
    const again = await new Browser(bed.url).call("POST", "/api/staff/invitations/accept", {
      token: staff.token,
      password: PASSWORD,
    });
    assert.equal(again.status, 403, "no CSRF token: refused before anything");
    const other = new Browser(bed.url);
    await other.open();
    const used = await other.call("POST", "/api/staff/invitations/accept", { token: staff.token, password: PASSWORD });
    assert.deepEqual([used.status, used.body], [410, { errors: ["invitation link has expired or was already used"] }]);
    // Another browser has no enrolment under way: the password alone opens nothing.
    const none = await other.call("POST", "/api/staff/enrolment/totp");
    assert.deepEqual(
      [none.status, none.body],
      [401, { errors: ["the enrolment has expired or was not started: ask an administrator for a new invitation"] }],
    );
    const signIn = await passwordStep(staff.email);
    assert.deepEqual(
      [signIn.answer.status, signIn.answer.body],
      [403, { errors: ["no second factor is enrolled: ask an administrator for a new invitation"] }],
    );
  });

  test("an authenticator app: secret and otpauth URI, a wrong code refused, the right one starts a staff session", async () => {
    const staff = await invitedStaff("read_only");
    const browser = new Browser(bed.url);
    await browser.open();
    await browser.call("POST", "/api/staff/invitations/accept", { token: staff.token, password: PASSWORD });
    const offered = await browser.call("POST", "/api/staff/enrolment/totp");
    assert.equal(offered.headers.get("cache-control"), "no-store");
    const { secret, uri } = offered.body as { secret: string; uri: string };
    assert.match(secret, /^[A-Z2-7]{32}$/, "20 bytes in base32");
    const parsed = new URL(uri);
    assert.equal(parsed.protocol, "otpauth:");
    assert.equal(parsed.searchParams.get("secret"), secret);
    assert.equal(parsed.searchParams.get("issuer"), "Delivery console");
    assert.ok(decodeURIComponent(parsed.pathname).endsWith(staff.email));

    const wrong = await browser.call("POST", "/api/staff/enrolment/totp/confirm", { code: wrongCode(secret) });
    assert.equal(wrong.status, 422);
    assert.match(wrong.body.errors[0], /^code is not the one the authenticator shows now/);
    const malformed = await browser.call("POST", "/api/staff/enrolment/totp/confirm", { code: "12345" });
    assert.equal(malformed.status, 422);
    const confirmed = await browser.call("POST", "/api/staff/enrolment/totp/confirm", { code: codeOf(secret) });
    assert.equal(confirmed.status, 200);
    assert.deepEqual(confirmed.body.staff, { id: staff.id, email: staff.email, name: staff.name, role: "read_only" });
    assert.equal(browser.cookies.has("console_staff_challenge"), false, "the challenge cookie is cleared");

    // The session calls delivery-api with a staff token of its own, labelled with the session.
    const [session] = await sessionsOf(staff.id);
    assert.ok(session);
    const tokens = await bed.ops<{ tokens: Array<{ id: number; label: string; expires_at: string | null }> }>(
      "GET",
      `/staff/${staff.id}/tokens`,
    );
    const minted = tokens.body.tokens.find((token) => token.id === session.api_token_id);
    assert.equal(minted?.label, `console session ${session.id}`);
    assert.ok(minted?.expires_at, "it expires with the session at the latest");
    const me = await browser.call("GET", "/ops/v1/staff/me");
    assert.deepEqual(me.body, { kind: "staff", id: staff.id, email: staff.email, name: staff.name, role: "read_only" });
  });

  test("a new invitation starts the credentials afresh: old factors forgotten, sessions ended", async () => {
    const { staff, browser } = await enrolledStaff();
    await bed.inviteStaff(staff.email);
    const link = await bed.lastLinkTo(staff.email);
    const other = new Browser(bed.url);
    await other.open();
    const accepted = await other.call("POST", "/api/staff/invitations/accept", {
      token: tokenOf(link),
      password: "another long pass phrase",
    });
    assert.equal(accepted.status, 200);
    assert.equal((await browser.call("GET", "/api/staff/session")).body.signed_in, false, "the old session ended");
    const { answer } = await passwordStep(staff.email, "another long pass phrase");
    assert.equal(answer.status, 403, "the old authenticator no longer counts");
  });
});

describe("two-step sign-in", () => {
  test("the password, then a code: each code works once, and no older one of its window", async () => {
    const { staff, secret, enrolmentCode } = await enrolledStaff();
    const { browser, answer } = await passwordStep(staff.email);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.factors, ["totp"]);
    assert.ok(browser.cookies.get("console_staff_challenge"));
    assert.equal((await browser.call("GET", "/api/staff/sign-in")).body.factors[0], "totp");
    // The enrolment's code is used (the very code: a 30 s step may have begun since).
    const replayed = await browser.call("POST", "/api/staff/sign-in/code", { code: enrolmentCode });
    assert.deepEqual([replayed.status, replayed.body], [401, { errors: ["the code is wrong or was already used"] }]);
    const next = codeOf(secret, 1);
    const signedIn = await browser.call("POST", "/api/staff/sign-in/code", { code: next });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.staff.email, staff.email);
    assert.equal((await browser.call("GET", "/api/staff/session")).body.signed_in, true);

    // The same code again, in a new sign-in: refused, though it is still within its window.
    const second = await passwordStep(staff.email);
    const again = await second.browser.call("POST", "/api/staff/sign-in/code", { code: next });
    assert.equal(again.status, 401);
    assert.equal((await second.browser.call("GET", "/api/staff/session")).body.signed_in, false);
  });

  test("a wrong password is 401; a second step needs the first, in the same browser", async () => {
    const { staff, secret } = await enrolledStaff();
    const wrong = await passwordStep(staff.email, "not the password at all");
    assert.deepEqual([wrong.answer.status, wrong.answer.body], [401, { errors: ["e-mail or password is wrong"] }]);
    const unknown = await passwordStep("nobody@operator.example");
    assert.deepEqual([unknown.answer.status, unknown.answer.body], [401, { errors: ["e-mail or password is wrong"] }]);
    const stranger = new Browser(bed.url);
    await stranger.open();
    const code = await stranger.call("POST", "/api/staff/sign-in/code", { code: codeOf(secret, 1) });
    assert.deepEqual(
      [code.status, code.body],
      [401, { errors: ["the sign-in has expired or was not started: enter your e-mail and password again"] }],
    );
    // An expired challenge is no challenge.
    const { browser } = await passwordStep(staff.email);
    await db.query("update console.staff_challenges set expires_at = now() - interval '1 second' where staff_id = $1", [
      staff.id,
    ]);
    const late = await browser.call("POST", "/api/staff/sign-in/code", { code: codeOf(secret, 1) });
    assert.equal(late.status, 401);
    assert.match(late.body.errors[0], /^the sign-in has expired/);
  });

  test("wrong codes: the challenge ends after 3, the e-mail is refused after 5 in the window (429), right password or not", async () => {
    const { staff, secret } = await enrolledStaff();
    const wrong = wrongCode(secret);
    const { browser } = await passwordStep(staff.email);
    for (let i = 1; i <= 2; i++) {
      const refused = await browser.call("POST", "/api/staff/sign-in/code", { code: wrong });
      assert.deepEqual([refused.status, refused.body], [401, { errors: ["the code is wrong or was already used"] }]);
    }
    const third = await browser.call("POST", "/api/staff/sign-in/code", { code: wrong });
    assert.equal(third.status, 401);
    assert.match(third.body.errors[0], /^the code is wrong or was already used; the sign-in has expired/);
    const spent = await browser.call("POST", "/api/staff/sign-in/code", { code: codeOf(secret, 1) });
    assert.match(spent.body.errors[0], /^the sign-in has expired/, "even the right code: the challenge is gone");

    const retry = await passwordStep(staff.email);
    assert.equal(retry.answer.status, 200);
    for (let i = 0; i < 2; i++) {
      assert.equal((await retry.browser.call("POST", "/api/staff/sign-in/code", { code: wrong })).status, 401);
    }
    // Five failures for the e-mail within the window: refused before the password is even looked at.
    const throttled = await passwordStep(staff.email);
    assert.deepEqual(
      [throttled.answer.status, throttled.answer.body],
      [429, { errors: ["too many failed sign-ins, try again later"] }],
    );
    assert.equal(throttled.answer.headers.get("retry-after"), "60");
    const meanwhile = await retry.browser.call("POST", "/api/staff/sign-in/code", { code: codeOf(secret, 1) });
    assert.equal(meanwhile.status, 429, "the open challenge is throttled too");
  });

  test("wrong second factors per person per hour: beyond the limit a sign-in stops at 429 though the password is right", async () => {
    const { staff, secret } = await enrolledStaff();
    const wrong = wrongCode(secret);
    // The minute's window is cleared between rounds (the sweep's doing a minute later): the hour still counts.
    const clearTheMinute = () =>
      db.query("delete from console.sign_in_failures where key like 'staff:%' or key like 'address:%'");
    for (let round = 0; round < FACTOR_FAILURES_PER_HOUR / 3; round++) {
      const { browser, answer } = await passwordStep(staff.email);
      assert.equal(answer.status, 200, `round ${round}`);
      for (let i = 0; i < 3; i++) {
        assert.equal((await browser.call("POST", "/api/staff/sign-in/code", { code: wrong })).status, 401);
      }
      await clearTheMinute();
    }
    const last = await passwordStep(staff.email);
    assert.equal(last.answer.status, 200, "the password is right, and the e-mail's minute is clear");
    const refused = await last.browser.call("POST", "/api/staff/sign-in/code", { code: codeOf(secret, 1) });
    assert.deepEqual([refused.status, refused.body], [429, { errors: ["too many failed sign-ins, try again later"] }]);
    assert.equal(refused.headers.get("retry-after"), "3600");
  });

  test("passkeys: none enrolled, no options; a forged assertion is refused and counted", async () => {
    const { staff, secret } = await enrolledStaff();
    const { browser } = await passwordStep(staff.email);
    const options = await browser.call("POST", "/api/staff/sign-in/passkey-options");
    assert.deepEqual(
      [options.status, options.body],
      [422, { errors: ["no passkey is enrolled: use the authenticator code"] }],
    );
    const forged = await browser.call("POST", "/api/staff/sign-in/passkey", {
      response: {
        id: "AAAA",
        rawId: "AAAA",
        type: "public-key",
        clientExtensionResults: {},
        response: { clientDataJSON: "e30", authenticatorData: "AAAA", signature: "AAAA" },
      },
    });
    assert.deepEqual([forged.status, forged.body], [401, { errors: ["the passkey was not accepted"] }]);
    const { rows } = await db.query("select count(*)::int as n from console.sign_in_failures where key = $1", [
      `staff-factor:${staff.id}`,
    ]);
    assert.equal(rows[0].n, 1);
    const oversized = await browser.call("POST", "/api/staff/sign-in/passkey", {
      response: { id: "A".repeat(5000) },
    });
    assert.equal(oversized.status, 422);
    assert.ok(secret);
  });

  test("a disabled person cannot sign in, and their session ends at their next call", async () => {
    const { staff, browser } = await enrolledStaff();
    assert.equal((await browser.call("GET", "/ops/v1/staff/me")).status, 200);
    assert.equal((await bed.ops("PATCH", `/staff/${staff.id}`, { disabled: true })).status, 200);
    const refused = await browser.call("GET", "/ops/v1/staff/me");
    assert.deepEqual([refused.status, refused.body], [401, { errors: ["the staff session has ended: sign in again"] }]);
    assert.equal((await browser.call("GET", "/api/staff/session")).body.signed_in, false);
    const { answer } = await passwordStep(staff.email);
    assert.deepEqual([answer.status, answer.body], [403, { errors: ["this staff account is disabled"] }]);
  });
});

describe("staff sessions", () => {
  test("sign-out revokes the session's staff token; a staff session is no shop session", async () => {
    const { staff, browser } = await enrolledStaff();
    const [session] = await sessionsOf(staff.id);
    assert.ok(session);
    assert.deepEqual(await liveTokenIds(staff.id), [session.api_token_id]);

    assert.equal((await browser.call("GET", "/api/session")).body.signed_in, false, "not a shop session");
    assert.equal((await browser.call("GET", "/api/v2/deliveries")).status, 401);
    const unsafe = await browser.call("DELETE", "/api/staff/session", undefined, { csrf: false });
    assert.equal(unsafe.status, 403);
    assert.equal((await browser.call("DELETE", "/api/staff/session")).status, 204);
    assert.equal((await browser.call("GET", "/api/staff/session")).body.signed_in, false);
    await waitFor(async () => ((await sessionsOf(staff.id)).length === 0 ? true : undefined), 10_000);
    assert.deepEqual(await liveTokenIds(staff.id), [], "revoked in delivery-api");
  });

  test("at most 10 live sessions per person: the oldest ends, and its token is revoked", async () => {
    const { staff, secret } = await enrolledStaff();
    const [first] = await sessionsOf(staff.id);
    assert.ok(first);
    // A code is accepted once: the test forgets the last one used, to sign in ten more times.
    const start = Date.now();
    for (let i = 0; i < 10; i++) {
      await db.query("update console.staff_credentials set totp_last_step = null where staff_id = $1", [staff.id]);
      const { browser } = await passwordStep(staff.email);
      const code = codeAt(secret, start);
      assert.equal((await browser.call("POST", "/api/staff/sign-in/code", { code })).status, 200);
    }
    await waitFor(async () => ((await sessionsOf(staff.id)).length === 10 ? true : undefined), 10_000);
    const live = await waitFor(async () => {
      const ids = await liveTokenIds(staff.id);
      return ids.includes(first.api_token_id) ? undefined : ids;
    }, 10_000);
    assert.deepEqual(
      live.sort((a, b) => a - b),
      (await sessionsOf(staff.id)).map((session) => session.api_token_id).sort((a, b) => a - b),
      "the live sessions' tokens, and no other",
    );
  });
});

describe("the operator API through the console", () => {
  test("as the staff person: delivery-api's roles, CSRF on changes, personal tokens", async () => {
    const reader = await enrolledStaff("read_only");
    const refused = await reader.browser.call("POST", "/ops/v1/accounts", {
      company_name: "Fleurs",
      environment: "test",
    });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(refused.body.errors[0], /read_only/);

    const admin = await enrolledStaff("admin");
    const noCsrf = await admin.browser.call(
      "POST",
      "/ops/v1/accounts",
      { company_name: "Fleurs", environment: "test" },
      { csrf: false },
    );
    assert.deepEqual(
      [noCsrf.status, noCsrf.body],
      [403, { errors: ["X-CSRF-Token header is missing or does not match"] }],
    );
    const created = await admin.browser.call("POST", "/ops/v1/accounts", {
      company_name: "Fleurs",
      environment: "test",
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.headers.get("cache-control"), "no-store");

    const personal = await admin.browser.call("POST", "/ops/v1/staff/me/tokens", { label: "laptop CLI" });
    assert.equal(personal.status, 201, JSON.stringify(personal.body));
    const token = personal.body.token as string;
    const me = await asStaffToken(token, "/staff/me");
    assert.deepEqual(((await me.json()) as { name: string }).name, admin.staff.name);
    const listed = await admin.browser.call("GET", "/ops/v1/staff/me/tokens");
    assert.ok(listed.body.tokens.some((t: { label: string }) => t.label === "laptop CLI"));
    const ids = await admin.browser.call("GET", "/api/staff/session-tokens");
    const [session] = await sessionsOf(admin.staff.id);
    assert.deepEqual(ids.body, { token_ids: [session?.api_token_id] });
    const revoked = await admin.browser.call("DELETE", `/ops/v1/staff/me/tokens/${personal.body.id}`);
    assert.equal(revoked.status, 204);
    assert.equal((await asStaffToken(token, "/staff/me")).status, 401);

    const bad = await admin.browser.call("POST", "/ops/v1/staff/me/tokens", { label: "" });
    assert.equal(bad.status, 422, "delivery-api's own 422, passed on");
    assert.ok(Array.isArray(bad.body.errors));
  });

  test("an administrator invites a shop's user; the role is delivery-api's, asked at each call", async () => {
    const admin = await enrolledStaff("admin");
    const account = await admin.browser.call("POST", "/ops/v1/accounts", {
      company_name: "Primeurs",
      environment: "test",
    });
    const email = `buyer-${account.body.id}@shop.example`;
    const user = await admin.browser.call("POST", `/ops/v1/accounts/${account.body.id}/users`, { email });
    assert.equal(user.status, 201, JSON.stringify(user.body));

    const noCsrf = await admin.browser.call("POST", "/api/staff/user-invitations", { email }, { csrf: false });
    assert.equal(noCsrf.status, 403);
    const invited = await admin.browser.call("POST", "/api/staff/user-invitations", { email });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    assert.equal(invited.body.email, email);
    const link = await bed.lastLinkTo(email);
    assert.match(link, /\/invitation#token=/);
    // The link is the shop's: it signs the user in to their account.
    const shop = new Browser(bed.url);
    await shop.open();
    const accepted = await shop.call("POST", "/api/invitations/accept", { token: tokenOf(link), password: PASSWORD });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal(accepted.body.user.account.id, account.body.id);

    const unknown = await admin.browser.call("POST", "/api/staff/user-invitations", { email: "nobody@shop.example" });
    assert.deepEqual(
      [unknown.status, unknown.body],
      [404, { errors: ["user with e-mail nobody@shop.example not found"] }],
    );
    const blank = await admin.browser.call("POST", "/api/staff/user-invitations", { email: "" });
    assert.equal(blank.status, 422);

    // Other roles, and a shop session, may not; nor may the administrator once demoted (no cache of the role).
    const dispatcher = await enrolledStaff("dispatcher");
    const refused = await dispatcher.browser.call("POST", "/api/staff/user-invitations", { email });
    assert.deepEqual(
      [refused.status, refused.body],
      [403, { errors: ["dispatcher may not invite a shop's users: administrators only"] }],
    );
    const asShop = await shop.call("POST", "/api/staff/user-invitations", { email });
    assert.equal(asShop.status, 401);
    const demoted = await bed.ops("PATCH", `/staff/${admin.staff.id}`, { role: "read_only" });
    assert.equal(demoted.status, 200);
    const after = await admin.browser.call("POST", "/api/staff/user-invitations", { email });
    assert.deepEqual(
      [after.status, after.body],
      [403, { errors: ["read_only may not invite a shop's users: administrators only"] }],
    );
  });

  test("a shop session, or none, finds nothing: /ops/v1 is 404 for any method (before CSRF), staff pages too", async () => {
    const shopUser = await bed.newAccountUser();
    await bed.invite(shopUser.email);
    const shop = new Browser(bed.url);
    await shop.open();
    const link = await bed.lastLinkTo(shopUser.email);
    assert.equal(
      (await shop.call("POST", "/api/invitations/accept", { token: tokenOf(link), password: PASSWORD })).status,
      200,
    );
    const nobody = new Browser(bed.url);
    for (const who of [shop, nobody]) {
      for (const [method, path] of [
        ["GET", "/ops/v1/staff/me"],
        ["GET", "/ops/v1/accounts"],
        ["POST", "/ops/v1/accounts"],
        ["DELETE", "/ops/v1/staff/me/tokens/1"],
        ["PATCH", "/ops/v1/no/such/route"],
      ] as const) {
        const answer = await who.call(method, path, method === "GET" ? undefined : {}, { csrf: false });
        assert.deepEqual(
          [answer.status, answer.body],
          [404, { errors: [`route ${method} ${path} not found`] }],
          `${method} ${path}`,
        );
      }
      for (const page of ["/staff", "/staff/tokens", "/staff/no/such/page"]) {
        const answer = await who.call("GET", page);
        assert.equal(answer.status, 404, page);
        assert.match(String(answer.body), /<div id="app">/, "the app, which shows its not-found page");
      }
      for (const page of ["/staff/sign-in", "/staff/sign-in/verify", "/staff/invitation", "/staff/enrolment"]) {
        assert.equal((await who.call("GET", page)).status, 200, page);
      }
    }
    const staff = await enrolledStaff();
    assert.equal((await staff.browser.call("GET", "/staff/tokens")).status, 200);
  });

  test("the forwarded path is resolved first; bodies are bounded", async () => {
    const { browser } = await enrolledStaff();
    for (const path of [
      "/ops/v1/../../api/v2/deliveries",
      "/ops/v1/%2e%2e/%2e%2e/api/v2/deliveries",
      "/ops/v1/staff%2fme",
      "/ops/v1/..%5c..%5capi",
    ]) {
      const answer = await browser.getAsWritten(path);
      assert.equal(answer.status, 404, path);
      assert.ok(Array.isArray(JSON.parse(answer.body).errors), path);
    }
    const big = await browser.call("POST", "/ops/v1/staff/me/tokens", { label: "x".repeat(70 * 1024) });
    assert.equal(big.status, 413);
    const text = await fetch(`${bed.url}/ops/v1/staff/me/tokens`, {
      method: "POST",
      headers: {
        "content-type": "text/plain",
        "x-csrf-token": browser.csrf,
        cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
      body: "label",
    });
    assert.equal(text.status, 415);
  });
});

describe("the demo seed", () => {
  test("demo staff get a password and an authenticator secret a person signs in with", async () => {
    const staff = await bed.newStaff("admin");
    const seed = spawnSync(
      process.execPath,
      // The build npm start runs, as the system under test runs the services' builds.
      [path.join(import.meta.dirname, "../dist/src/seed/seed-command.js"), "--staff", staff.email],
      {
        encoding: "utf8",
        timeout: 30_000,
        env: {
          ...process.env,
          DATABASE_URL: bed.system.env.DATABASE_URL,
          CONSOLE_OPS_URL: bed.system.opsUrl,
          CONSOLE_OPS_TOKEN: OPS_TOKEN,
          CONSOLE_SECRET_KEY: bed.system.env.CONSOLE_SECRET_KEY,
          DEMO_SEED_SECRET: "a-demo-seed-secret-for-this-test-0123456789",
        },
      },
    );
    assert.equal(seed.status, 0, seed.stderr);
    const printed = JSON.parse(seed.stdout) as {
      users: unknown[];
      staff: Array<{ email: string; password: string; totp_secret: string; totp_uri: string }>;
    };
    assert.deepEqual(printed.users, []);
    const [person] = printed.staff;
    assert.ok(person);
    assert.equal(person.email, staff.email);
    assert.equal(new URL(person.totp_uri).searchParams.get("secret"), person.totp_secret);
    const { browser, answer } = await passwordStep(staff.email, person.password);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const signedIn = await browser.call("POST", "/api/staff/sign-in/code", { code: codeOf(person.totp_secret) });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.staff.role, "admin");
  });
});
