/**
 * The staff in Chromium, for the page tests: a page that records anything loaded from elsewhere
 * and any script error, a person signed in through their invitation and an authenticator app
 * (codes computed here).
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { ConsoleBed } from "./console-harness.ts";
import { codeOf } from "./totp-codes.ts";

export const PASSWORD = "a long and memorable pass phrase";

export interface WatchedPage {
  page: Page;
  /** Requests to anywhere but the console. */
  foreign: string[];
  /** Script errors (a CSP refusal included). */
  errors: string[];
}

export async function newPage(browser: Browser, bed: ConsoleBed): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
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

/** Sets the first password on the invitation's page; the enrolment page follows. */
async function setPassword(page: Page, link: string) {
  await page.goto(link);
  await page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
  await page.getByLabel("New password again").fill(PASSWORD);
  await page.getByRole("button", { name: "Set password and continue" }).click();
  await page.getByRole("heading", { name: "Second factor" }).waitFor();
}

/** The virtual authenticator: the passkeys it holds. */
export interface VirtualAuthenticator {
  credentials(): Promise<unknown[]>;
}

/**
 * Chromium's virtual authenticator on this page (a platform authenticator that verifies its
 * user at once): what a laptop's fingerprint reader would do, without a person.
 */
export async function addVirtualAuthenticator(page: Page): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    async credentials() {
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      return credentials;
    },
  };
}

/**
 * A new staff person with `role`, invited, enrolled with a passkey of Chromium's virtual
 * authenticator, signed out, and signed in again with the password and the passkey: signed in on `page`.
 */
export async function signInWithPasskey(bed: ConsoleBed, page: Page, role: "admin" | "dispatcher" | "read_only") {
  const authenticator = await addVirtualAuthenticator(page);
  const staff = await bed.newStaff(role);
  const invited = await bed.inviteStaff(staff.email);
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  await setPassword(page, await bed.lastLinkTo(staff.email));
  await page.getByLabel("Name of this passkey").fill("Work laptop");
  await page.getByRole("button", { name: "Create a passkey" }).click();
  await page.getByRole("heading", { name: `Welcome, ${staff.name}` }).waitFor();
  assert.equal((await authenticator.credentials()).length, 1, "the authenticator holds the passkey");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Staff sign-in" }).waitFor();
  await page.getByLabel("E-mail").fill(staff.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Use my passkey" }).click();
  await page.getByRole("heading", { name: `Welcome, ${staff.name}` }).waitFor();
  return staff;
}

/** A new staff person with `role` (or the one given), invited, enrolled with an authenticator app: signed in on `page`. */
export async function signInWithApp(
  bed: ConsoleBed,
  page: Page,
  person: { role: "admin" | "dispatcher" | "read_only" } | { id: number; email: string; name: string },
) {
  const staff = "role" in person ? await bed.newStaff(person.role) : person;
  const invited = await bed.inviteStaff(staff.email);
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  await setPassword(page, await bed.lastLinkTo(staff.email));
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  const secret = (await page.getByTestId("totp-secret").textContent()) ?? "";
  await page.getByLabel("6-digit code from your authenticator app").fill(codeOf(secret));
  await page.getByRole("button", { name: "Confirm and sign in" }).click();
  await page.getByRole("heading", { name: `Welcome, ${staff.name}` }).waitFor();
  return staff;
}

/** A change forced from the page's own script, as a person with the developer tools could: its status and body. */
export async function forcedCall(page: Page, method: string, path: string, body: unknown) {
  return (await page.evaluate(
    async ([method, path, body]) => {
      const session = (await (await fetch("/api/staff/session")).json()) as { csrf_token: string };
      const csrf = session.csrf_token;
      const response = await fetch(path, {
        method,
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    },
    [method, path, body] as const,
  )) as { status: number; body: { errors?: string[] } };
}
