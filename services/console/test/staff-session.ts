/**
 * A signed-in staff person over HTTP, as a browser is after an invitation and the enrolment of
 * an authenticator app (codes computed here): for tests of what the staff reach once in.
 */
import assert from "node:assert/strict";
import type { ConsoleBed } from "./console-harness.ts";
import { Browser } from "./http-browser.ts";
import { codeOf } from "./totp-codes.ts";

export type Role = "admin" | "dispatcher" | "read_only";

const STAFF_PASSWORD = "correct horse battery staple";

const tokenOf = (link: string) => new URL(link).hash.replace("#token=", "");

/** A new staff person of delivery-api with `role`, invited and enrolled: their browser, signed in. */
export async function signedInStaff(bed: ConsoleBed, role: Role) {
  const staff = await bed.newStaff(role);
  const invited = await bed.inviteStaff(staff.email);
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  const browser = new Browser(bed.url);
  await browser.open();
  const accepted = await browser.call("POST", "/api/staff/invitations/accept", {
    token: tokenOf(await bed.lastLinkTo(staff.email)),
    password: STAFF_PASSWORD,
  });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const offered = await browser.call("POST", "/api/staff/enrolment/totp");
  assert.equal(offered.status, 200, JSON.stringify(offered.body));
  const confirmed = await browser.call("POST", "/api/staff/enrolment/totp/confirm", {
    code: codeOf(offered.body.secret),
  });
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
  return { staff, browser };
}

/** A shop user of a new account, signed in through their invitation. */
export async function signedInShopUser(bed: ConsoleBed) {
  const user = await bed.newAccountUser();
  assert.equal((await bed.invite(user.email)).status, 201);
  const browser = new Browser(bed.url);
  await browser.open();
  const accepted = await browser.call("POST", "/api/invitations/accept", {
    token: tokenOf(await bed.lastLinkTo(user.email)),
    password: STAFF_PASSWORD,
  });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  return { user, browser };
}
