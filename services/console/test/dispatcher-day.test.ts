/**
 * A dispatcher's day (issue 19), in real Chromium against the whole system: an administrator sets
 * a shop up and invites its user through the Accounts pages; the shop user creates a delivery in
 * the shop's console; a dispatcher, signed in with a passkey of Chromium's virtual authenticator,
 * puts it on a round from the dispatch board and starts it; a position posted to geo-ingest for
 * the round's vehicle moves its marker on the live map within 2 s; the dispatcher completes the
 * tasks, the drop-off with a proof photo; the shop user sees the delivery delivered and billed;
 * the audit log shows each of the dispatcher's actions under the dispatcher's name.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { launchChromium } from "@dos/service-kit/testing-browser";
import type { Browser, Locator, Page } from "playwright-core";
import { GEO_OPS_TOKEN, operator } from "../../../e2e/src/operator.ts";
import { newPage, PASSWORD, signInWithApp, signInWithPasskey } from "./chromium-staff.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { checkPage, SCREENSHOTS, screenshot } from "./page-checks.ts";

let bed: ConsoleBed;
let browser: Browser;
before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  bed = await startConsoleBed({ GEO_OPS_TOKEN });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await bed?.close();
});

/** An 8×8 PNG, the courier's photo of the parcel at the door. */
const PROOF_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAeUlEQVR4nAXBIQEAIRAAMIIRAo3G0OAavEGjMTS4BpjF+q2oXetGF93qTpedXtSp" +
    "TWOKaU1nysksamhhhAgrnJBBFPXTPuMTn/U5n/z4irq1bWyxre1sudlFvdo1rrjWda683KKmlkaKtNJJmWRRn/aMJ571nCcf7wf7PXYhQG2DugAA" +
    "AABJRU5ErkJggg==",
  "base64",
);

/** A datetime-local input's value for a moment `hours` from now, in the browser's (UTC) zone. */
const localInput = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString().slice(0, 16);

/** How long a page may take to show a change, on a loaded machine. */
const SHOWN_MS = 20_000;

const staffLink = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name, exact: true });
const accountTab = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Account" }).getByRole("link", { name, exact: true });

/** The administrator's part: a production shop with a zone, a package type, a tariff and a default place; its user invited. */
async function setUpShop(page: Page, company: string, userEmail: string) {
  await staffLink(page, "Accounts").click();
  await page.getByRole("link", { name: "New account" }).click();
  await page.getByLabel("Company name").fill(company);
  await page.getByLabel("Environment (fixed once created)").selectOption("production");
  await page.getByRole("button", { name: "Create the account" }).click();
  await page.getByRole("heading", { name: new RegExp(`^${company}`) }).waitFor();

  await accountTab(page, "Zones").click();
  await page.getByLabel("Postal code").fill("75002");
  await page.getByLabel("Centroid latitude").fill("48.8686");
  await page.getByLabel("Centroid longitude").fill("2.3411");
  await page.getByRole("button", { name: "Add the zone" }).click();
  await page.getByRole("cell", { name: "75002", exact: true }).waitFor();

  await accountTab(page, "Package types").click();
  await page.getByLabel("Name (as clients see it)").fill("Bouquet box");
  await page.getByLabel("Volume (dm³)").fill("20");
  await page.getByLabel("Weight (kg)").fill("2");
  await page.getByRole("button", { name: "Add the package type" }).click();
  await page.getByRole("cell", { name: "Bouquet box", exact: true }).waitFor();

  await accountTab(page, "Places").click();
  const defaultPlace = page.getByRole("form", { name: "Default place" });
  await defaultPlace.getByLabel("Recipient name").fill(`${company} workshop`);
  await defaultPlace.getByLabel("Address (number and street only)").fill("3 Rue du Mail");
  await defaultPlace.getByLabel("Postal code").fill("75002");
  await defaultPlace.getByLabel("City").fill("Paris");
  await defaultPlace.getByRole("button", { name: "Save the default place" }).click();
  await page.getByTestId("default-place").getByText("3 Rue du Mail, 75002 Paris").waitFor();

  await accountTab(page, "Tariffs").click();
  await page.getByLabel("Outbound", { exact: true }).fill("9");
  await page.getByLabel("Inbound", { exact: true }).fill("11");
  await page.getByLabel("Pickup and dropoff", { exact: true }).fill("14");
  await page.getByRole("button", { name: "Save the new version" }).click();
  await page.getByTestId("tariffs").getByText("(in force)").waitFor();

  await accountTab(page, "General").click();
  await page.getByLabel("E-mail").fill(userEmail);
  await page.getByLabel("Name (optional)").fill("Camille Martin");
  await page.getByRole("button", { name: "Invite the user" }).click();
  await page.getByRole("status").getByText(`Invitation sent to ${userEmail}`).waitFor();
}

/** The shop user's part: the invitation accepted, a delivery created through the form; its id. */
async function createDelivery(page: Page, userEmail: string, slot: { from: string; to: string }) {
  await page.goto(await bed.lastLinkTo(userEmail));
  await page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
  await page.getByLabel("New password again").fill(PASSWORD);
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.getByRole("link", { name: "Deliveries" }).first().click();
  await page.getByRole("link", { name: "New delivery" }).click();
  await page.getByRole("heading", { name: "New delivery" }).waitFor();
  await page.getByLabel("Client order reference").fill("BOUQUET-42");
  await page.getByLabel("Name").fill("Jeanne Martin");
  await page.getByLabel("Phone").fill("+33612345678");
  await page.getByLabel("Address").fill("12 Rue de la Paix");
  await page.getByLabel("Postal code").fill("75002");
  await page.getByLabel("City").fill("Paris");
  await page.getByLabel("From").fill(slot.from);
  await page.getByLabel("To").fill(slot.to);
  await page.getByRole("button", { name: "Create the delivery" }).click();
  const heading = page.getByRole("heading", { name: /^Delivery #\d+$/ });
  await heading.waitFor();
  return Number((await heading.textContent())?.replace(/\D/g, ""));
}

/** The section of the page under this heading. */
const sectionOf = (page: Page, heading: string) =>
  page.locator("section", { has: page.getByRole("heading", { name: heading, exact: true }) });

/** Chooses the option of a select whose text contains `text`. */
async function selectByText(select: Locator, text: string) {
  const value = await select.locator("option", { hasText: text }).first().getAttribute("value");
  assert.ok(value !== null, `an option with ${text}`);
  await select.selectOption(value);
}

/** A task of the round page, by its delivery and kind (pickup or drop-off). */
function taskItem(page: Page, deliveryId: number, kind: RegExp): Locator {
  return page
    .getByRole("list", { name: /tasks/i })
    .getByRole("listitem")
    .filter({ hasText: `Delivery #${deliveryId}` })
    .filter({ hasText: kind });
}

test("a dispatcher's day: a shop set up, its delivery on a round, followed on the live map, delivered with proof, billed, audited", async () => {
  const suffix = Date.now();
  const company = `Fleurs du Jour ${suffix}`;
  const userEmail = `camille-${suffix}@fleurs.example`;

  // The administrator sets the shop up and invites its user.
  const admin = await newPage(browser, bed);
  await signInWithApp(bed, admin.page, { role: "admin" });
  await setUpShop(admin.page, company, userEmail);

  // The shop user creates a delivery in the shop's console.
  const shop = await newPage(browser, bed);
  // The drop-off slot: its start's day is the delivery's service day (the board's, the statement's).
  const slot = { from: localInput(1), to: localInput(3) };
  const deliveryId = await createDelivery(shop.page, userEmail, slot);
  assert.ok(deliveryId > 0);
  const serviceDay = slot.from.slice(0, 10);

  // The operator's standing fleet: a courier and a van with its tracker (kept by automation).
  const messenger = await bed.ops<{ id: number; name: string }>("POST", "/messengers", {
    name: `Karim ${suffix}`,
    phone: "+33600000042",
  });
  assert.equal(messenger.status, 201, JSON.stringify(messenger.body));
  const vehicle = { externalId: `VAN-${suffix}`, provider: "acme-trackers" };
  const createdVehicle = await bed.ops<{ id: number }>("POST", "/vehicles", {
    external_id: vehicle.externalId,
    provider: vehicle.provider,
    label: "Van 7",
  });
  assert.equal(createdVehicle.status, 201, JSON.stringify(createdVehicle.body));

  // The dispatcher signs in with a passkey.
  const dispatch = await newPage(browser, bed);
  const { page } = dispatch;
  const dispatcher = await signInWithPasskey(bed, page, "dispatcher");

  // The board of the delivery's day: a new round, the delivery's tasks assigned to it.
  await staffLink(page, "Dispatch").click();
  await page.getByRole("heading", { name: "Dispatch", exact: true }).waitFor();
  await page.goto(`${bed.pageUrl}/staff/dispatch?date=${serviceDay}`);
  const toAssign = sectionOf(page, "To assign");
  const tasks = toAssign.getByRole("checkbox", { name: new RegExp(`Delivery #${deliveryId}\\b`) });
  await waitFor(async () => (await tasks.count()) > 0, SHOWN_MS, "the delivery's tasks on the board");
  const newRound = page.locator("form", { has: page.getByRole("heading", { name: "New round" }) });
  await newRound.getByLabel("Messenger").selectOption({ label: messenger.body.name });
  await selectByText(newRound.getByLabel("Vehicle"), vehicle.externalId);
  await newRound.getByRole("button", { name: "Create round" }).click();
  const roundLink = sectionOf(page, "Rounds").getByRole("link", { name: /^Round #\d+$/ });
  await waitFor(async () => (await roundLink.count()) === 1, SHOWN_MS, "the new round on the board");
  const roundId = Number((await roundLink.textContent())?.replace(/\D/g, ""));
  for (const checkbox of await tasks.all()) await checkbox.check();
  await selectByText(page.getByLabel("Round", { exact: true }), `Round #${roundId}`);
  await page.getByRole("button", { name: "Assign selected" }).click();
  await waitFor(async () => (await tasks.count()) === 0, SHOWN_MS, "the assigned tasks leave the list to assign");
  await checkPage(page, "dispatch board (dispatcher's day)");
  await screenshot(page, "dispatcher-day-board");

  // Its round: started.
  await roundLink.click();
  await page.getByRole("heading", { name: `Round #${roundId}` }).waitFor();
  await page.getByRole("button", { name: "Start round" }).click();
  await page.getByText("started", { exact: true }).first().waitFor();

  // The live map: the van's marker follows the positions its tracker posts to geo-ingest.
  const geo = operator(bed.system.opsUrl, bed.system.url("geo-ingest"));
  const round = { id: roundId, vehicle, tasks: [] };
  await geo.storedPosition(round as never, 48.8686, 2.3411, new Date());
  await staffLink(page, "Live map").click();
  await page.getByRole("heading", { name: "Live map" }).waitFor();
  const marker = page.getByRole("button", { name: new RegExp(`^Vehicle ${vehicle.externalId}: `) }).first();
  await marker.waitFor();
  // geo-ingest publishes a vehicle's position at most once a second: the next one, a second on.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const posted = performance.now();
  assert.equal(await geo.position(vehicle, 48.8702, 2.3456, new Date()), 200);
  await waitFor(async () => (await marker.getAttribute("data-lat")) === "48.8702", 5000, "the marker moves");
  const movedMs = performance.now() - posted;
  console.log(`live map: the marker moved ${movedMs.toFixed(0)} ms after the position was posted`);
  assert.ok(movedMs <= 2000, `the marker moved after ${movedMs.toFixed(0)} ms (at most 2 s)`);
  assert.equal(await marker.getAttribute("data-lng"), "2.3456");
  await checkPage(page, "live map (dispatcher's day)");
  await screenshot(page, "dispatcher-day-live-map");

  // Clicking the van opens its round; the tasks are done there, the drop-off with a photo.
  await marker.click();
  await page.getByRole("heading", { name: `Round #${roundId}` }).waitFor();
  const pickup = taskItem(page, deliveryId, /pick/i);
  await pickup.getByRole("button", { name: /^Start task/ }).click();
  await pickup.getByRole("button", { name: /^Complete task/ }).click();
  await waitFor(
    async () => /completed|done/i.test((await pickup.textContent()) ?? ""),
    SHOWN_MS,
    "the pickup completed",
  );
  const dropoff = taskItem(page, deliveryId, /drop/i);
  await dropoff.getByRole("button", { name: /^Start task/ }).click();
  await dropoff.getByLabel("Proof photo").setInputFiles({
    name: "door.png",
    mimeType: "image/png",
    buffer: PROOF_PNG,
  });
  await dropoff.getByRole("button", { name: /^Complete task/ }).click();
  const proof = dropoff.getByRole("img");
  await proof.waitFor();
  assert.ok((await proof.getAttribute("alt"))?.length, "the proof photo has a text alternative");
  await waitFor(
    async () => (await proof.evaluate((img) => (img as { naturalWidth: number }).naturalWidth)) === 8,
    SHOWN_MS,
    "the photo",
  );
  await checkPage(page, "round (dispatcher's day)");
  await screenshot(page, "dispatcher-day-round");

  // The shop user sees it delivered, and billed on the month's statement.
  await shop.page.reload();
  await shop.page.getByTestId("status").getByText("delivered").waitFor({ timeout: 20_000 });
  await shop.page.getByRole("link", { name: "Billing" }).click();
  await shop.page.getByLabel("Month").fill(serviceDay.slice(0, 7));
  await shop.page.getByRole("button", { name: "Show the statement" }).click();
  const line = shop.page.getByRole("row").filter({ hasText: `#${deliveryId}` });
  await line.waitFor();
  assert.match((await line.textContent()) ?? "", /delivered.*€9\.00$/);
  await screenshot(shop.page, "dispatcher-day-shop-billing");

  // The audit log: each of the dispatcher's actions, under the dispatcher's name.
  await staffLink(page, "Audit").click();
  await page.getByRole("heading", { name: "Audit log" }).waitFor();
  await page.getByLabel("Person").selectOption({ label: dispatcher.name });
  await page.getByRole("button", { name: "Apply filters" }).click();
  await page.waitForURL(new RegExp(`person=${dispatcher.id}`));
  const entries = page.getByRole("list", { name: "Audit entries" }).locator(":scope > li");
  const expected = [
    /POST \/ops\/v1\/rounds201/,
    /POST \/ops\/v1\/rounds\/\{id\}\/deliveries20\d/,
    /POST \/ops\/v1\/rounds\/\{id\}\/start200/,
    /POST \/ops\/v1\/tasks\/\{id\}\/start200/,
    /POST \/ops\/v1\/tasks\/\{id\}\/pictures201/,
    /POST \/ops\/v1\/tasks\/\{id\}\/complete200/,
  ];
  await waitFor(
    async () => {
      const texts = await entries.allTextContents();
      return expected.every((action) => texts.some((text) => action.test(text)));
    },
    SHOWN_MS,
    "every action of the dispatcher in the audit log",
  );
  const texts = await entries.allTextContents();
  assert.ok(
    texts.every((text) => text.includes(dispatcher.name)),
    "each entry names the dispatcher",
  );
  await checkPage(page, "audit log (dispatcher's day)");
  await screenshot(page, "dispatcher-day-audit");

  for (const watched of [admin, shop, dispatch]) {
    assert.deepEqual(watched.foreign, [], "nothing loaded from anywhere but the console");
    assert.deepEqual(watched.errors, [], "no script error");
    await watched.page.context().close();
  }
});
