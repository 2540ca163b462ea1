/**
 * The staff's Audit, Staff and System pages in real Chromium against the whole system: the audit
 * log filtered by person and by resource (the filters in the URL, a deep link opening them), its
 * older pages, a change read as a diff and a filter the API refuses shown beside its field; an
 * administrator inviting a person (whose e-mailed link works), changing a role and disabling, a
 * dispatcher offered none of it; the System page showing readiness, webhook figures and
 * positions, and a stopped service as not answering, by itself every few seconds. axe-core and
 * the keyboard on every page, and screenshots.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { launchChromium } from "@dos/service-kit/testing-browser";
import type { Browser } from "playwright-core";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../../../e2e/src/client.ts";
import { GEO_OPS_TOKEN, operator } from "../../../e2e/src/operator.ts";
import { newPage, signInWithApp } from "./chromium-staff.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { checkPage, SCREENSHOTS, screenshot } from "./page-checks.ts";
import { signedInStaff } from "./staff-session.ts";

/**
 * Until the page shows what `check` looks for (polled from here: the pages' CSP refuses the
 * evaluated predicates of waitForFunction).
 */
const until = (check: () => Promise<boolean>) =>
  waitFor(async () => ((await check()) ? true : undefined), 30_000, "what the page should show");
const storedOf = (text: string | null) => Number(text?.replace(/\D/g, ""));

let bed: ConsoleBed;
let browser: Browser;
let account: SeededAccount;
before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  bed = await startConsoleBed({
    CONSOLE_SYSTEM_SAMPLE_SECONDS: "2",
    CONSOLE_SYSTEM_TIMEOUT_MS: "1500",
    CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: "100000",
    GEO_OPS_TOKEN,
  });
  [account] = seedAccounts(bed.system) as [SeededAccount];
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await bed?.close();
});

describe("the audit log page", () => {
  test("filtered by person and resource (in the URL), older pages, a change as a diff, a refused filter beside its field", async () => {
    const { page, foreign, errors } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "read_only" });
    // A dispatcher's day so far, through the console as that person: a vehicle created then
    // changed, a change their role may not make, and enough messengers for two pages.
    const { staff: dispatcher, browser: dispatcherHttp } = await signedInStaff(bed, "dispatcher");
    const vehicle = await dispatcherHttp.call("POST", "/ops/v1/vehicles", {
      external_id: `AUDIT-${Date.now()}`,
      provider: "acme-trackers",
      label: "Van 12",
    });
    assert.equal(vehicle.status, 201, JSON.stringify(vehicle.body));
    const vehicleId = vehicle.body.id as number;
    const patched = await dispatcherHttp.call("PATCH", `/ops/v1/vehicles/${vehicleId}`, { label: "Van 12 (blue)" });
    assert.equal(patched.status, 200);
    assert.equal((await dispatcherHttp.call("POST", "/ops/v1/accounts", { company_name: "Not mine" })).status, 403);
    for (let i = 0; i < 26; i++) {
      assert.equal((await dispatcherHttp.call("POST", "/ops/v1/messengers", { name: `Courier ${i}` })).status, 201);
    }
    // Automation did something too: it must not appear under the dispatcher's name.
    assert.equal((await bed.ops("POST", "/messengers", { name: "Scripted courier" })).status, 201);

    await page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name: "Audit" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const entries = page.getByRole("list", { name: "Audit entries" }).locator(":scope > li");
    await entries.first().waitFor();
    // Newest first: automation's messenger, then the dispatcher's last one.
    await entries
      .nth(0)
      .getByRole("link", { name: /^automation/ })
      .waitFor();
    assert.match((await entries.nth(1).textContent()) ?? "", /POST \/ops\/v1\/messengers201 done/);

    // By person: the select lists the staff by name (a read-only person may not list the staff).
    await page.getByLabel("Person").selectOption({ label: dispatcher.name });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(new RegExp(`person=${dispatcher.id}`));
    await until(async () => (await entries.allTextContents()).every((text) => text.includes(dispatcher.name)));
    assert.equal(await entries.count(), 25, "a page of 25");
    assert.equal(await page.getByRole("link", { name: /^automation/ }).count(), 0);
    await checkPage(page, "audit log (by person)");
    // The older page: the rest of the dispatcher's 29 entries.
    await page.getByRole("link", { name: "Older entries" }).click();
    await page.waitForURL(/before_id=/);
    await page.getByRole("link", { name: "Newest entries" }).waitFor();
    await until(async () => (await entries.count()) === 4);
    const older = (await entries.allTextContents()).join("\n");
    assert.match(older, /PATCH \/ops\/v1\/vehicles\/\{id\}200 done/);
    assert.match(older, /POST \/ops\/v1\/accounts403 refused/);
    assert.equal(await page.getByRole("link", { name: "Older entries" }).count(), 0, "the last page");

    // By resource, from the PATCH's own resource link: its change, then its creation.
    const patchEntry = entries.filter({ hasText: "PATCH /ops/v1/vehicles/{id}" });
    await patchEntry.getByRole("link", { name: `vehicles ${vehicleId} (show only its entries)` }).click();
    await page.waitForURL(new RegExp(`resource_type=vehicles&resource_id=${vehicleId}`));
    await until(async () => (await entries.count()) === 2);
    const change = entries.nth(0);
    // The diff: the label changed, marked, before and after; the rest folded away.
    const labelRow = change.getByRole("row", { name: /^label changed/ });
    assert.deepEqual(await labelRow.getByRole("cell").allTextContents(), ["Van 12", "Van 12 (blue)"]);
    assert.equal(await change.getByRole("row", { name: /^provider/ }).isVisible(), false, "unchanged: folded");
    await change.getByText(/^\d+ unchanged fields$/).click();
    assert.deepEqual(
      await change
        .getByRole("row", { name: /^provider/ })
        .getByRole("cell")
        .allTextContents(),
      ["acme-trackers", "acme-trackers"],
    );
    // The creation: every field added, nothing before.
    const creation = entries.nth(1);
    assert.match((await creation.textContent()) ?? "", /POST \/ops\/v1\/vehicles201 done/);
    assert.deepEqual(
      await creation
        .getByRole("row", { name: /^external_id added/ })
        .getByRole("cell")
        .allTextContents(),
      ["—", vehicle.body.external_id],
    );
    await checkPage(page, "audit log (by resource, a diff open)");
    await screenshot(page, "staff-audit");

    // A link opens the same view: the filters are read from the URL, and shown in the form.
    await page.goto(`${bed.pageUrl}/staff/audit?person=${dispatcher.id}&resource_type=vehicles`);
    await until(async () => (await entries.count()) === 2);
    assert.equal(await page.getByLabel("Person").inputValue(), String(dispatcher.id));
    assert.equal(await page.getByLabel("Resource type").inputValue(), "vehicles");
    // A filter the API refuses: its message beside the field that caused it.
    await page.goto(`${bed.pageUrl}/staff/audit?resource_type=Vehicles;drop`);
    const refusal = page.locator(".field-error", { hasText: /^querystring\.resource_type / });
    await refusal.waitFor();
    assert.equal(
      await page.getByLabel("Resource type").getAttribute("aria-describedby"),
      await refusal.getAttribute("id"),
    );
    await checkPage(page, "audit log (a refused filter)");
    // Nothing matches: said so.
    await page.goto(`${bed.pageUrl}/staff/audit?resource_type=vehicles&resource_id=999999999`);
    await page.getByText("No entry matches these filters.").waitFor();

    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});

describe("the staff page", () => {
  test("an administrator invites a person with a role, changes it, disables them; a dispatcher is offered none of it", async () => {
    const { page, foreign, errors } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "admin" });
    const nav = page.getByRole("navigation", { name: "Staff" });
    await nav.getByRole("link", { name: "Staff" }).click();
    await page.getByRole("heading", { name: "Staff", exact: true }).waitFor();
    await page.getByRole("table").waitFor();

    const email = `newcomer-${Date.now()}@operator.example`;
    const form = page.getByRole("form", { name: "Invite a person" });
    // Refused by the API (no name): its message beside the field.
    await form.getByLabel("E-mail").fill(email);
    await form.getByRole("button", { name: "Invite" }).click();
    const nameError = page.locator(".field-error", { hasText: /^name / });
    await nameError.waitFor();
    assert.equal(await form.getByLabel("Name").getAttribute("aria-describedby"), await nameError.getAttribute("id"));
    await form.getByLabel("Name").fill("Nina Newcomer");
    await form.getByLabel("Role").selectOption({ label: "Read-only" });
    await form.getByRole("button", { name: "Invite" }).click();
    await page.getByRole("status").getByText(`Invitation sent to ${email}`).waitFor();
    const row = page.getByRole("row").filter({ hasText: "Nina Newcomer" });
    assert.deepEqual((await row.getByRole("cell").allTextContents()).slice(0, 4), [
      "Nina Newcomer",
      email,
      "Read-only",
      "Active",
    ]);
    assert.match(await bed.lastLinkTo(email), /\/staff\/invitation#token=/);
    // The same e-mail again: delivery-api's 409, beside the e-mail.
    await form.getByLabel("Name").fill("Nina Again");
    await form.getByLabel("E-mail").fill(email);
    await form.getByRole("button", { name: "Invite" }).click();
    await page.locator(".field-error", { hasText: /^email .* is already used by another staff member/ }).waitFor();
    await checkPage(page, "staff page");
    await screenshot(page, "staff-people");

    const id = Number(
      (
        (await bed.ops<{ staff: Array<{ id: number }> }>("GET", `/staff?email=${encodeURIComponent(email)}`)).body
          .staff[0] as { id: number }
      ).id,
    );
    await page.getByLabel("Role of Nina Newcomer", { exact: true }).selectOption({ label: "Dispatcher" });
    await page.getByRole("button", { name: "Save role of Nina Newcomer" }).click();
    await row.getByRole("cell", { name: "Dispatcher", exact: true }).waitFor();
    assert.equal((await bed.ops<{ role: string }>("GET", `/staff/${id}`)).body.role, "dispatcher");
    await page.getByRole("button", { name: "Disable Nina Newcomer" }).click();
    await row.getByRole("cell", { name: "Disabled", exact: true }).waitFor();
    assert.equal((await bed.ops<{ disabled: boolean }>("GET", `/staff/${id}`)).body.disabled, true);
    // A disabled person gets no invitation: the button is gone from their row.
    assert.equal(await page.getByRole("button", { name: "Send a new invitation to Nina Newcomer" }).count(), 0);
    await page.getByRole("button", { name: "Enable Nina Newcomer" }).click();
    await row.getByRole("cell", { name: "Active", exact: true }).waitFor();
    await page.getByRole("button", { name: "Send a new invitation to Nina Newcomer" }).click();
    await page.getByRole("status").getByText(`A new invitation was sent to ${email}`).waitFor();
    assert.match(await bed.lastLinkTo(email), /\/staff\/invitation#token=/);
    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    await page.context().close();

    // A dispatcher: no Staff section; its address says it is for administrators, and the API refuses.
    const other = await newPage(browser, bed);
    await signInWithApp(bed, other.page, { role: "dispatcher" });
    const dispatcherNav = other.page.getByRole("navigation", { name: "Staff" });
    await dispatcherNav.getByRole("link", { name: "Audit" }).waitFor();
    assert.equal(await dispatcherNav.getByRole("link", { name: "Staff" }).count(), 0);
    await other.page.goto(`${bed.pageUrl}/staff/people`);
    await other.page.getByText("Only an administrator manages the staff.").waitFor();
    const refused = (await other.page.evaluate(
      `(async () => (await fetch("/ops/v1/staff?page=1&per_page=10")).status)()`,
    )) as number;
    assert.equal(refused, 403);
    assert.deepEqual(other.errors, []);
    await other.page.context().close();
  });
});

describe("the System page", () => {
  test("readiness, webhook figures and positions, read again by itself; a stopped service shown as not answering", async () => {
    const { page, foreign, errors } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "read_only" });
    await page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name: "System" }).click();
    await page.getByRole("heading", { name: "System", exact: true }).waitFor();
    const row = (name: string) => page.locator(`tr[data-service="${name}"]`);
    for (const name of ["delivery-api", "geo-ingest", "pricing", "webhook-dispatcher", "console"]) {
      await row(name).getByText("Ready", { exact: true }).waitFor();
      assert.equal(await row(name).getByRole("cell", { name: "1 of 1" }).count(), 1, name);
    }
    await page.getByTestId("webhook-backlog").waitFor();
    const storedBefore = storedOf(await page.getByTestId("positions-stored").textContent());

    // Positions of an active round's vehicle: the page shows them stored, without a reload.
    const created = await call(
      `${bed.system.url("delivery-api")}/api/v2/deliveries`,
      "POST",
      clientHeaders(account),
      outboundDelivery(account, "system-page"),
    );
    assert.equal(created.status, 201);
    const fleet = operator(bed.system.opsUrl, bed.system.url("geo-ingest"));
    const round = await fleet.startRound([(created.body as { id: number }).id]);
    const t0 = Date.now();
    for (let i = 0; i < 2; i++) await fleet.storedPosition(round, 48.85 + i / 1000, 2.34, new Date(t0 + i * 1000));
    await until(async () => storedOf(await page.getByTestId("positions-stored").textContent()) === storedBefore + 2);
    await page
      .getByTestId("positions-per-second")
      .getByText(/per second over the last/)
      .waitFor({ timeout: 30_000 });
    await checkPage(page, "system page");
    await screenshot(page, "staff-system");

    const pricing = bed.system.services.find((s) => s.spec.name === "pricing");
    assert.ok(pricing?.child.pid);
    process.kill(pricing.child.pid, "SIGSTOP");
    try {
      await row("pricing").getByText("Not answering", { exact: true }).waitFor({ timeout: 30_000 });
      await row("pricing")
        .getByText(/not answering: no answer within 1500 ms/)
        .waitFor();
      await row("delivery-api").getByText("Ready", { exact: true }).waitFor();
      await checkPage(page, "system page (a service not answering)");
      await screenshot(page, "staff-system-not-answering");
    } finally {
      process.kill(pricing.child.pid, "SIGCONT");
    }
    await row("pricing").getByText("Ready", { exact: true }).waitFor({ timeout: 30_000 });
    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});
