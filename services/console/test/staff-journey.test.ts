/**
 * The operator's staff in the console, in real Chromium against the whole system: a dispatcher
 * enrols a passkey (Chromium's virtual authenticator, through the DevTools protocol) and signs in
 * with it; an administrator enrols an authenticator app and signs in with codes the test
 * computes, after a refused password and code, until the throttle stops them; personal tokens
 * are created (shown once, copied), used from a plain HTTP client, and revoked; a shop user finds
 * no staff page and no /ops/v1. Every staff page is checked (axe-core, keyboard) and photographed.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { launchChromium } from "@dos/service-kit/testing-browser";
import type { Browser, Page } from "playwright-core";
import { addVirtualAuthenticator } from "./chromium-staff.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { checkPage, SCREENSHOTS, screenshot } from "./page-checks.ts";
import { codeOf, wrongCode } from "./totp-codes.ts";

let bed: ConsoleBed;
let browser: Browser;
before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  bed = await startConsoleBed();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await bed?.close();
});

const PASSWORD = "a long and memorable pass phrase";

/** A page that records anything loaded from elsewhere than the console, and any script error. */
async function newPage(): Promise<{ page: Page; foreign: string[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: bed.pageUrl });
  const page = await context.newPage();
  const foreign: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => {
    if (!request.url().startsWith(bed.pageUrl)) foreign.push(request.url());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return { page, foreign, errors };
}

async function invitationLink(role: "admin" | "dispatcher" | "read_only") {
  const staff = await bed.newStaff(role);
  const invited = await bed.inviteStaff(staff.email);
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  return { ...staff, link: await bed.lastLinkTo(staff.email) };
}

async function setPassword(page: Page, link: string) {
  await page.goto(link);
  await page.getByRole("heading", { name: "Welcome to the staff console" }).waitFor();
  await page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
  await page.getByLabel("New password again").fill(PASSWORD);
  await page.getByRole("button", { name: "Set password and continue" }).click();
  await page.getByRole("heading", { name: "Second factor" }).waitFor();
}

async function signOut(page: Page) {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Staff sign-in" }).waitFor();
}

async function passwordStep(page: Page, email: string, password = PASSWORD) {
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Continue" }).click();
}

describe("staff sign-in", () => {
  test("a dispatcher enrols a passkey, makes and revokes a personal token, and signs in again with the passkey", async () => {
    const staff = await invitationLink("dispatcher");
    const { page, foreign, errors } = await newPage();
    const authenticator = await addVirtualAuthenticator(page);

    await page.goto(staff.link);
    await page.getByRole("heading", { name: "Welcome to the staff console" }).waitFor();
    await checkPage(page, "staff invitation");
    await screenshot(page, "staff-invitation");
    await setPassword(page, staff.link);
    await checkPage(page, "staff enrolment");
    await screenshot(page, "staff-enrolment");

    await page.getByLabel("Name of this passkey").fill("Work laptop");
    await page.getByRole("button", { name: "Create a passkey" }).click();
    await page.getByRole("heading", { name: `Welcome, ${staff.name}` }).waitFor();
    assert.equal((await authenticator.credentials()).length, 1, "the authenticator holds the passkey");
    await page.getByText(`${staff.name} · Dispatcher`).waitFor();

    // The shell: every section a dispatcher may open is a link.
    const nav = page.getByRole("navigation", { name: "Staff" });
    for (const section of ["Accounts", "Fleet", "Dispatch", "Live map", "System", "Audit", "Personal tokens"])
      await nav.getByRole("link", { name: section, exact: true }).waitFor();
    assert.equal(await nav.getByRole("link", { name: "Staff" }).count(), 0, "the staff: administrators only");
    await checkPage(page, "staff home");
    await screenshot(page, "staff-home");

    // A personal token for the CLI: refused without a label (the API's 422 beside the field),
    // then shown once, copied, used as the person from a plain HTTP client, revoked.
    await nav.getByRole("link", { name: "Personal tokens" }).click();
    await page.getByRole("heading", { name: "Personal tokens" }).waitFor();
    await page.getByRole("button", { name: "Create a token" }).click();
    const label = page.getByLabel("Label");
    const refused = page.locator(".field-error", { hasText: /^label / });
    await refused.waitFor();
    assert.equal(await label.getAttribute("aria-describedby"), await refused.getAttribute("id"));
    await label.fill("laptop CLI");
    await page.getByRole("button", { name: "Create a token" }).click();
    const token = (await page.getByTestId("new-token").textContent()) ?? "";
    assert.match(token, /^dos_staff_[A-Za-z0-9_-]{43}$/);
    await page.getByRole("button", { name: "Copy token" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    assert.equal(await page.evaluate("navigator.clipboard.readText()"), token);
    const me = await fetch(`${bed.system.opsUrl}/ops/v1/staff/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { name: string }).name, staff.name);
    const row = page.getByRole("row").filter({ hasText: "laptop CLI" });
    await row.waitFor();
    assert.equal(await page.getByRole("row").filter({ hasText: "console session" }).count(), 0);
    await checkPage(page, "personal tokens");
    await screenshot(page, "staff-tokens");
    await page.reload();
    await page.getByRole("heading", { name: "Personal tokens" }).waitFor();
    await row.waitFor();
    assert.equal(await page.getByTestId("new-token").count(), 0, "the token is shown once");
    await page.getByRole("button", { name: "Revoke token laptop CLI" }).click();
    await row.waitFor({ state: "detached" });
    const revoked = await fetch(`${bed.system.opsUrl}/ops/v1/staff/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(revoked.status, 401);

    // Out, and in again: the password, then the passkey.
    await signOut(page);
    await passwordStep(page, staff.email, "not the password at all");
    await page.getByRole("alert").getByText("e-mail or password is wrong").waitFor();
    await passwordStep(page, staff.email);
    await page.getByRole("button", { name: "Use my passkey" }).waitFor();
    await checkPage(page, "staff second step (passkey)");
    await screenshot(page, "staff-sign-in-passkey");
    await page.getByRole("button", { name: "Use my passkey" }).click();
    await page.getByRole("heading", { name: `Welcome, ${staff.name}` }).waitFor();

    assert.deepEqual(foreign, [], "nothing loaded from anywhere but the console");
    assert.deepEqual(errors, [], "no script error (a CSP refusal included)");
    await page.context().close();
  });

  test("an administrator enrols an authenticator app; a wrong password and a wrong code are refused, then throttled", async () => {
    const staff = await invitationLink("admin");
    const { page, foreign, errors } = await newPage();
    await setPassword(page, staff.link);
    await page.getByRole("button", { name: "Set up an authenticator app" }).click();
    const secret = (await page.getByTestId("totp-secret").textContent()) ?? "";
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.match((await page.getByTestId("totp-uri").textContent()) ?? "", /^otpauth:\/\/totp\//);
    await checkPage(page, "staff enrolment (authenticator app)");
    await screenshot(page, "staff-enrolment-totp");
    await page.getByLabel("6-digit code from your authenticator app").fill(codeOf(secret));
    await page.getByRole("button", { name: "Confirm and sign in" }).click();
    await page.getByRole("heading", { name: `Welcome, ${staff.name}` }).waitFor();
    await page.getByText(`${staff.name} · Administrator`).waitFor();
    await signOut(page);

    await passwordStep(page, staff.email, "not the password at all");
    await page.getByRole("alert").getByText("e-mail or password is wrong").waitFor();
    await checkPage(page, "staff sign-in (refused)");
    await screenshot(page, "staff-sign-in");
    await passwordStep(page, staff.email);
    const code = page.getByLabel("6-digit code from your authenticator app");
    await code.waitFor();
    assert.equal(await page.getByRole("button", { name: "Use my passkey" }).count(), 0, "no passkey enrolled");
    await code.fill(wrongCode(secret));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("the code is wrong or was already used").waitFor();
    await checkPage(page, "staff second step (code refused)");
    await screenshot(page, "staff-sign-in-code");
    await code.fill(codeOf(secret, 1));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: `Welcome, ${staff.name}` }).waitFor();
    await signOut(page);

    // Two failures so far this minute; three more wrong passwords, and the right one is refused.
    for (let i = 0; i < 3; i++) {
      await passwordStep(page, staff.email, `wrong password number ${i}`);
      await page.getByRole("alert").getByText("e-mail or password is wrong").waitFor();
    }
    await passwordStep(page, staff.email);
    await page.getByRole("alert").getByText("too many failed sign-ins, try again later").waitFor();
    assert.equal(await page.getByRole("heading", { name: "Staff sign-in" }).count(), 1, "still signed out");

    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});

describe("a shop user", () => {
  test("finds no staff page and no /ops/v1 through the console", async () => {
    const user = await bed.newAccountUser();
    await bed.invite(user.email);
    const link = await bed.lastLinkTo(user.email);
    const { page, errors } = await newPage();
    await page.goto(link);
    await page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
    await page.getByLabel("New password again").fill(PASSWORD);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("heading", { name: "API tokens" }).waitFor();

    for (const path of ["/staff", "/staff/tokens", "/staff/accounts"]) {
      const response = await page.goto(`${bed.pageUrl}${path}`);
      assert.equal(response?.status(), 404, path);
      await page.getByRole("heading", { name: "Page not found" }).waitFor();
      // The shop's own frame, as at any address that does not exist: nothing of the staff's.
      await page.getByRole("link", { name: "Deliveries" }).waitFor();
      assert.equal(await page.getByRole("navigation", { name: "Staff" }).count(), 0);
    }
    await checkPage(page, "staff page, as a shop user");
    const calls = (await page.evaluate(`(async () => {
      const csrf = (await (await fetch("/api/session")).json()).csrf_token;
      const get = await fetch("/ops/v1/staff/me");
      const post = await fetch("/ops/v1/accounts", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body: JSON.stringify({ company_name: "Mine now", environment: "test" }),
      });
      return [get.status, post.status];
    })()`)) as number[];
    assert.deepEqual(calls, [404, 404]);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});
