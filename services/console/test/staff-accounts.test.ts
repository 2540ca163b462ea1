/**
 * The staff's Accounts and Fleet pages, in real Chromium against the whole system: an
 * administrator sets a shop up (account, zones, a package type, a tariff after previewing its
 * price explanation, the default place and a saved address, an API rate limit of its own) and
 * invites its user, who then signs in to the shop's console; a dispatcher reads all of it but is
 * offered no change, and delivery-api itself refuses one forced from the page (403, shown as a
 * message when a page meets it). Every page is checked (axe-core, keyboard) and photographed.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { launchChromium } from "@dos/service-kit/testing-browser";
import type { Browser, Locator, Page } from "playwright-core";
import { forcedCall, newPage, PASSWORD, signInWithApp } from "./chromium-staff.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { checkPage, SCREENSHOTS, screenshot } from "./page-checks.ts";

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

/** The error the page shows beside the field with this label (its aria-describedby). */
async function fieldError(page: Page, label: string, within: Page | Locator = page) {
  const field = within.getByLabel(label, { exact: true });
  await page.waitForFunction(
    (element) => element?.getAttribute("aria-describedby") !== null,
    await field.elementHandle(),
  );
  const id = (await field.getAttribute("aria-describedby")) as string;
  return (await page.locator(`[id="${id}"]`).textContent()) ?? "";
}

/** The account pages' own navigation. */
const accountTab = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Account" }).getByRole("link", { name, exact: true });

describe("accounts", () => {
  test("an administrator sets a shop up, previews its tariff, sets its rate limit and invites its user, who signs in", async () => {
    const { page, foreign, errors } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "admin" });

    await page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name: "Accounts" }).click();
    await page.getByRole("heading", { name: "Accounts", exact: true }).waitFor();
    await page.getByRole("link", { name: "New account" }).click();
    await page.getByRole("heading", { name: "New account" }).waitFor();
    // The API's 422, beside the field it names.
    await page.getByRole("button", { name: "Create the account" }).click();
    assert.equal(await fieldError(page, "Company name"), "company_name is required");
    await checkPage(page, "new account (refused)");
    await page.getByLabel("Company name").fill("Fleurs de Paris");
    await page.getByLabel("Environment (fixed once created)").selectOption("test");
    await page.getByRole("button", { name: "Create the account" }).click();
    await page.getByRole("heading", { name: /^Fleurs de Paris/ }).waitFor();
    const accountId = /\/staff\/accounts\/(\d+)$/.exec(page.url())?.[1] as string;
    assert.ok(accountId, page.url());
    await page.getByText("Test account: its deliveries are not real and never billed.").waitFor();

    // The client API rate limit of its own: shown, stored, and applied by the client API.
    await page.getByLabel("Requests").fill("50");
    await page.getByLabel("Per window of (seconds)").fill("0");
    await page.getByRole("button", { name: "Set the account's limit" }).click();
    assert.match(await fieldError(page, "Per window of (seconds)"), /^rate_limit\.window_seconds must be /);
    await page.getByLabel("Per window of (seconds)").fill("10");
    await page.getByRole("button", { name: "Set the account's limit" }).click();
    await page.getByTestId("rate-limit").getByText("50 requests per 10 s").waitFor();
    assert.deepEqual((await bed.ops<{ rate_limit: unknown }>("GET", `/accounts/${accountId}`)).body.rate_limit, {
      quota: 50,
      window_seconds: 10,
    });

    // Zones: one refused (its latitude), then two.
    await accountTab(page, "Zones").click();
    await page.getByRole("heading", { name: "Zones" }).waitFor();
    await page.getByText("No zone yet: the account delivers nowhere.").waitFor();
    await page.getByLabel("Postal code").fill("75002");
    await page.getByLabel("Centroid latitude").fill("200");
    await page.getByLabel("Centroid longitude").fill("2.3411");
    await page.getByRole("button", { name: "Add the zone" }).click();
    assert.equal(await fieldError(page, "Centroid latitude"), "zones[0].latitude must be at most 90");
    await page.getByLabel("Centroid latitude").fill("48.8686");
    await page.getByRole("button", { name: "Add the zone" }).click();
    await page.getByRole("cell", { name: "75002", exact: true }).waitFor();
    await page.getByLabel("Postal code").fill("75011");
    await page.getByLabel("Centroid latitude").fill("48.8590");
    await page.getByLabel("Centroid longitude").fill("2.3797");
    await page.getByRole("button", { name: "Add the zone" }).click();
    await page.getByRole("cell", { name: "75011", exact: true }).waitFor();
    await checkPage(page, "account zones");
    await screenshot(page, "staff-account-zones");

    // A package type.
    await accountTab(page, "Package types").click();
    await page.getByRole("heading", { name: "Package types" }).waitFor();
    await page.getByLabel("Name (as clients see it)").fill("Box M");
    await page.getByLabel("Volume (dm³)").fill("30");
    await page.getByLabel("Weight (kg)").fill("5");
    await page.getByLabel("Fragility").selectOption("fragile");
    await page.getByRole("button", { name: "Add the package type" }).click();
    await page.getByRole("cell", { name: "Box M", exact: true }).waitFor();
    await checkPage(page, "account package types");
    await screenshot(page, "staff-account-package-types");

    // The default place, and a saved address refused outside the zones, then kept inside.
    await accountTab(page, "Places").click();
    await page.getByRole("heading", { name: "Places" }).waitFor();
    const defaultPlace = page.getByRole("form", { name: "Default place" });
    await defaultPlace.getByLabel("Recipient name").fill("Entrepôt Fleurs");
    await defaultPlace.getByLabel("Address (number and street only)").fill("3 Rue du Mail");
    await defaultPlace.getByLabel("Postal code").fill("93100");
    await defaultPlace.getByLabel("City").fill("Montreuil");
    await defaultPlace.getByRole("button", { name: "Save the default place" }).click();
    await page.getByTestId("default-place").getByText("3 Rue du Mail, 93100 Montreuil").waitFor();
    const address = page.getByRole("form", { name: "Add a saved address" });
    await address.getByLabel("Recipient name").fill("Boutique Marais");
    await address.getByLabel("Address (number and street only)").fill("8 Rue de Bretagne");
    await address.getByLabel("Postal code").fill("75003");
    await address.getByLabel("City").fill("Paris");
    await address.getByLabel("Recipient phone").fill("01 42 00 00 00");
    await address.getByRole("button", { name: "Add the address" }).click();
    assert.equal(
      await fieldError(page, "Postal code", address),
      "postal_code 75003 is not in a delivery zone of the account; add the zone first",
    );
    await address.getByLabel("Postal code").fill("75002");
    await address.getByRole("button", { name: "Add the address" }).click();
    await page.getByRole("cell", { name: "8 Rue de Bretagne, 75002 Paris", exact: true }).waitFor();
    await checkPage(page, "account places");
    await screenshot(page, "staff-account-places");

    // A tariff: its price explanation previewed for a sample delivery, a draft refused, then saved.
    await accountTab(page, "Tariffs").click();
    await page.getByRole("heading", { name: "Tariffs" }).waitFor();
    await page.getByText("No tariff yet: the account's deliveries are not priced.").waitFor();
    await page.getByLabel("Outbound", { exact: true }).fill("9");
    await page.getByLabel("Inbound", { exact: true }).fill("11");
    await page.getByLabel("Pickup and dropoff", { exact: true }).fill("14");
    await page.getByLabel("Per package (€)").fill("1");
    await page.getByRole("button", { name: "Add a weight band" }).click();
    await page.getByLabel("Weight band 1 from (kg)").fill("10");
    await page.getByLabel("Weight band 1 price (€)").fill("2.50");
    await page.getByRole("button", { name: "Add a weight band" }).click();
    await page.getByLabel("Weight band 2 from (kg)").fill("5");
    await page.getByLabel("Weight band 2 price (€)").fill("1");
    await page.getByRole("button", { name: "Add a slot surcharge" }).click();
    await page.getByLabel("Slot surcharge 1 under (minutes)").fill("60");
    await page.getByLabel("Slot surcharge 1 price (€)").fill("5");
    await page.getByLabel("Package of the size of").selectOption({ label: "Box M" });
    await page.getByLabel("Packages", { exact: true }).fill("3");
    await page.getByLabel("Slot length (minutes)").fill("45");
    await page.getByLabel("Ordered this long before the slot (minutes)").fill("300");
    await page.getByRole("button", { name: "Preview the price" }).click();
    assert.equal(
      await fieldError(page, "Weight band 2 from (kg)"),
      "weight_bands[1].from_kg must be greater than weight_bands[0].from_kg (10)",
    );
    await page.getByRole("button", { name: "Remove weight band 2" }).click();
    // Enter in the sample's fields previews (it does not save the draft).
    await page.getByLabel("Slot length (minutes)").press("Enter");
    const preview = page.getByTestId("tariff-preview");
    await preview.waitFor();
    assert.deepEqual(await preview.locator("tbody tr").allInnerTexts(), [
      "Base price (outbound)\t€9.00",
      "3 packages × 1.00\t€3.00",
      "Total weight 15 kg (band from 10 kg)\t€2.50",
      "Slot of 45 min (shorter than 60 min)\t€5.00",
    ]);
    assert.equal(await page.getByTestId("preview-total").textContent(), "€19.50");
    await checkPage(page, "account tariffs (preview)");
    await screenshot(page, "staff-account-tariffs");
    // Previewing stored nothing; saving does.
    assert.deepEqual((await bed.ops("GET", `/accounts/${accountId}/tariffs`)).body, []);
    await page.getByRole("button", { name: "Save the new version" }).click();
    await page
      .getByRole("status")
      .getByText(/^Version #\d+ saved/)
      .waitFor();
    await page.getByTestId("tariffs").getByText("(in force)").waitFor();
    const stored = (await bed.ops<Array<Record<string, unknown>>>("GET", `/accounts/${accountId}/tariffs`)).body;
    assert.deepEqual(
      [stored.length, stored[0]?.base_cents, stored[0]?.weight_bands, stored[0]?.slot_surcharges],
      [
        1,
        { outbound: 900, inbound: 1100, other: 1400 },
        [{ from_kg: 10, cents: 250 }],
        [{ shorter_than_minutes: 60, cents: 500 }],
      ],
    );

    // A user invited: created in delivery-api, sent the console's link.
    await accountTab(page, "General").click();
    await page.getByRole("heading", { name: "General" }).waitFor();
    const email = `buyer-${accountId}@fleurs.example`;
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Name (optional)").fill("Camille Martin");
    await page.getByRole("button", { name: "Invite the user" }).click();
    await page.getByRole("status").getByText(`Invitation sent to ${email}`).waitFor();
    await page.getByRole("cell", { name: email, exact: true }).waitFor();
    await checkPage(page, "account general");
    await screenshot(page, "staff-account");

    // The accounts list shows it, with its limit.
    await page.getByRole("link", { name: "All accounts" }).click();
    await page.getByRole("row").filter({ hasText: "Fleurs de Paris" }).getByText("50 requests per 10 s").waitFor();
    await checkPage(page, "accounts list");
    await screenshot(page, "staff-accounts");

    // The user's link signs them in to the shop's console, their account's.
    const shop = await newPage(browser, bed);
    await shop.page.goto(await bed.lastLinkTo(email));
    await shop.page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
    await shop.page.getByLabel("New password again").fill(PASSWORD);
    await shop.page.getByRole("button", { name: "Set password and sign in" }).click();
    await shop.page.getByRole("heading", { name: "Fleurs de Paris" }).waitFor();
    await shop.page.getByText("75002, 75011").waitFor();
    await shop.page.getByText("Box M").waitFor();
    await shop.page.context().close();

    assert.deepEqual(foreign, [], "nothing loaded from anywhere but the console");
    assert.deepEqual(errors, [], "no script error");
    await page.context().close();
  });
});

/** An account set up through the operator API (automation), with something on every page. */
async function shopAccount(name: string) {
  const account = await bed.ops<{ id: number }>("POST", "/accounts", { company_name: name, environment: "test" });
  const id = account.body.id;
  const calls: Array<[string, string, unknown]> = [
    ["POST", `/accounts/${id}/zones`, { zones: [{ postal_code: "75002", latitude: 48.8686, longitude: 2.3411 }] }],
    ["POST", `/accounts/${id}/package_types`, { name: "Box S", volume_dm3: 10, weight_kg: 2 }],
    [
      "PUT",
      `/accounts/${id}/default_place`,
      { recipient_name: "Hub", address: "1 Rue du Mail", postal_code: "75002", city: "Paris" },
    ],
    [
      "POST",
      `/accounts/${id}/addresses`,
      {
        recipient_name: "Shop",
        address: "2 Rue du Mail",
        postal_code: "75002",
        city: "Paris",
        recipient_phone: "0142000000",
      },
    ],
    ["POST", `/accounts/${id}/tariffs`, { base_cents: { outbound: 800, inbound: 800, other: 1200 } }],
    ["POST", `/accounts/${id}/users`, { email: `someone-${id}@shop.example` }],
  ];
  for (const [method, path, body] of calls) {
    const answer = await bed.ops(method, path, body);
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return id;
}

describe("roles on the account pages", () => {
  test("a dispatcher reads every page of an account but is offered no change, and delivery-api refuses one forced", async () => {
    const accountId = await shopAccount("Primeurs du Marais");
    const { page, errors } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "dispatcher" });
    await page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name: "Accounts" }).click();
    await page.getByRole("link", { name: "Primeurs du Marais" }).waitFor();
    assert.equal(await page.getByRole("link", { name: "New account" }).count(), 0);
    await page.getByRole("link", { name: "Primeurs du Marais" }).click();

    const pages: Array<[string, string]> = [
      ["General", `someone-${accountId}@shop.example`],
      ["Places", "1 Rue du Mail, 75002 Paris"],
      ["Zones", "75002"],
      ["Package types", "Box S"],
      ["Tariffs", "(in force)"],
    ];
    for (const [tab, shown] of pages) {
      await accountTab(page, tab).click();
      await page.getByRole("heading", { name: tab, exact: true }).waitFor();
      await page.getByText(shown, { exact: false }).first().waitFor();
      assert.equal(await page.locator("main form").count(), 0, `no form on ${tab}`);
      assert.equal(await page.locator("main button").count(), 0, `no button on ${tab}`);
    }
    await checkPage(page, "account tariffs, as a dispatcher");
    await screenshot(page, "staff-account-dispatcher");

    // Forced from the page's own script: delivery-api refuses it, naming the role; nothing changes.
    const zone = { zones: [{ postal_code: "75011", latitude: 48.859, longitude: 2.3797 }] };
    const forced = await forcedCall(page, "POST", `/ops/v1/accounts/${accountId}/zones`, zone);
    assert.deepEqual(forced, {
      status: 403,
      body: { errors: ["dispatcher may not POST /ops/v1/accounts/{accountId}/zones"] },
    });
    const invitation = await forcedCall(page, "POST", "/api/staff/user-invitations", {
      email: `someone-${accountId}@shop.example`,
    });
    assert.deepEqual(invitation, {
      status: 403,
      body: { errors: ["dispatcher may not invite a shop's users: administrators only"] },
    });
    const zones = await bed.ops<Array<{ postal_code: string }>>("GET", `/accounts/${accountId}/zones`);
    assert.deepEqual(
      zones.body.map((z) => z.postal_code),
      ["75002"],
    );
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test("an administrator demoted while a page is open: the change is refused by delivery-api and the page says so", async () => {
    const accountId = await shopAccount("Fromagerie Oberkampf");
    const { page } = await newPage(browser, bed);
    const admin = await signInWithApp(bed, page, { role: "admin" });
    await page.goto(`${bed.pageUrl}/staff/accounts/${accountId}/zones`);
    await page.getByRole("heading", { name: "Zones", exact: true }).waitFor();
    const demoted = await bed.ops("PATCH", `/staff/${admin.id}`, { role: "dispatcher" });
    assert.equal(demoted.status, 200);
    await page.getByLabel("Postal code").fill("75011");
    await page.getByLabel("Centroid latitude").fill("48.859");
    await page.getByLabel("Centroid longitude").fill("2.3797");
    await page.getByRole("button", { name: "Add the zone" }).click();
    await page.getByRole("alert").getByText("dispatcher may not POST /ops/v1/accounts/{accountId}/zones").waitFor();
    assert.equal(await page.getByRole("cell", { name: "75011", exact: true }).count(), 0);
    await checkPage(page, "account zones, a refusal shown");
    await page.context().close();
  });
});

/** A position posted to geo-ingest for a vehicle, as its tracker would: the answer's status and body. */
async function postPosition(externalId: string, token?: string, timestamp?: string, longitude = 2.3411) {
  const response = await fetch(`${bed.system.url("geo-ingest")}/external/vehicles/${externalId}/geolocations`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { "x-provider-token": token } : {}) },
    body: JSON.stringify({
      latitude: 48.8686,
      longitude,
      provider: "acme",
      ...(timestamp ? { timestamp } : {}),
    }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe("fleet", () => {
  test("a dispatcher adds a vehicle and a messenger; the vehicle's page shows its External ID, a tracker token set then rotated (shown once), and its last position with its age", async () => {
    const { page, foreign, errors } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "dispatcher" });
    await page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name: "Fleet" }).click();
    await page.getByRole("heading", { name: "Vehicles" }).waitFor();
    const externalIdLabel = "External ID (the tracker's vehicle_id; fixed)";
    await page.getByRole("button", { name: "Add the vehicle" }).click();
    assert.equal(await fieldError(page, externalIdLabel), "external_id is required");
    await page.getByLabel(externalIdLabel).fill("VAN-42");
    await page.getByLabel("Tracker provider").fill("acme");
    await page.getByLabel("Label (optional)").fill("Van 42");
    await page.getByRole("button", { name: "Add the vehicle" }).click();
    await page.getByRole("link", { name: "VAN-42" }).waitFor();
    await checkPage(page, "vehicles");
    await screenshot(page, "staff-vehicles");

    await page.getByRole("link", { name: "VAN-42" }).click();
    await page.getByRole("heading", { name: "Vehicle VAN-42" }).waitFor();
    assert.equal(await page.getByTestId("external-id").textContent(), "VAN-42");
    await page.getByTestId("token-state").getByText("none").waitFor();
    // Without a token geo-ingest takes the tracker's word (FLEET has the vehicle within a moment).
    await waitFor(async () => (await postPosition("VAN-42")).status === 200, 10_000, "the vehicle in geo-ingest");

    const tokenLabel = "Token the provider sends (16 characters or more)";
    await page.getByLabel(tokenLabel).fill("too short");
    await page.getByRole("button", { name: "Set the token" }).click();
    assert.equal(await fieldError(page, tokenLabel), "provider_token must be at least 16 characters");
    const token = "acme-tracker-secret-0123456789";
    await page.getByLabel(tokenLabel).fill(token);
    await page.getByRole("button", { name: "Set the token" }).click();
    await page.getByRole("status").getByText("Tracker token set").waitFor();
    await page.getByTestId("token-state").getByText("set", { exact: true }).waitFor();
    assert.equal(await page.getByLabel(tokenLabel).inputValue(), "", "the token is not kept in the page");
    const refused = await waitFor(
      async () => {
        const answer = await postPosition("VAN-42");
        return answer.status === 401 ? answer : undefined;
      },
      10_000,
      "geo-ingest requiring the token",
    );
    assert.deepEqual(refused.body, { errors: ["X-Provider-Token is required for this vehicle"] });
    // With it, the position is taken again (once the one-a-second slot of the first is past).
    await waitFor(async () => (await postPosition("VAN-42", token)).status === 200, 10_000, "the token accepted");

    // Rotated: a new token made by delivery-api, shown once with its copy button; the old one stops.
    await page.getByRole("button", { name: "Rotate the token" }).click();
    const rotated = (await page.getByTestId("new-tracker-token").textContent()) ?? "";
    assert.match(rotated, /^[A-Za-z0-9_-]{43}$/);
    await page.getByRole("button", { name: "Copy token" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    assert.equal(await page.evaluate("navigator.clipboard.readText()"), rotated);
    const stale = await waitFor(
      async () => {
        const answer = await postPosition("VAN-42", token);
        return answer.status === 401 ? answer : undefined;
      },
      10_000,
      "the old token refused",
    );
    assert.deepEqual(stale.body, { errors: ["X-Provider-Token is invalid"] });

    // On a round, a position its tracker sends becomes the page's last position, with its age, and is on the map.
    const vehicleId = Number(/\/vehicles\/(\d+)$/.exec(page.url())?.[1]);
    const messenger = await bed.ops<{ id: number }>("POST", "/messengers", { name: "Jeanne" });
    const round = await bed.ops<{ id: number }>("POST", "/rounds", {
      messenger_id: messenger.body.id,
      vehicle_id: vehicleId,
    });
    assert.equal((await bed.ops("POST", `/rounds/${round.body.id}/start`)).status, 200);
    await page.getByTestId("current-round").getByText(`round #${round.body.id}, Jeanne`).waitFor();
    const recordedAt = new Date(Date.now() - 30_000).toISOString();
    // Taken once the round's start reached geo-ingest (the same position sent again is stored once).
    await waitFor(
      async () => {
        if ((await postPosition("VAN-42", rotated, recordedAt)).status !== 200) return undefined;
        const stored = await bed.ops<{ positions: unknown[] }>("GET", `/vehicles/${vehicleId}/positions?limit=1`);
        return stored.body.positions.length === 1;
      },
      15_000,
      "the position stored",
    );
    await page.getByTestId("last-position").getByText("48.86860, 2.34110").waitFor();
    const shownAge = (await page.getByTestId("last-position-age").textContent()) ?? "";
    const seconds = /^(\d+) s ago$/.exec(shownAge)?.[1];
    assert.ok(shownAge.endsWith(" min ago") || Number(seconds) >= 30, `age ${shownAge}`);
    await page.getByTestId("recent-positions").getByRole("cell", { name: "48.86860, 2.34110" }).waitFor();
    // Two more, eastwards: the newest is the last position, the three are the track.
    for (const [secondsAgo, longitude] of [
      [20, 2.35],
      [10, 2.36],
    ] as const) {
      const at = new Date(Date.now() - secondsAgo * 1000).toISOString();
      await waitFor(async () => (await postPosition("VAN-42", rotated, at, longitude)).status === 200, 10_000);
    }
    await page.getByTestId("last-position").getByText("48.86860, 2.36000").waitFor();
    await page.getByTestId("recent-positions").getByText("The latest 3 of the 3 positions on the map").waitFor();
    await page.locator('[data-testid="vehicle-map"][data-loaded]').waitFor();
    await page.reload();
    await page.getByRole("heading", { name: "Vehicle VAN-42" }).waitFor();
    assert.equal(await page.getByTestId("new-tracker-token").count(), 0, "the token is shown once");
    await page.locator('[data-testid="vehicle-map"][data-loaded]').waitFor();
    await checkPage(page, "vehicle");
    await screenshot(page, "staff-vehicle");

    // Messengers: refused without a name, added, renamed.
    await page.getByRole("navigation", { name: "Fleet" }).getByRole("link", { name: "Messengers" }).click();
    await page.getByRole("heading", { name: "Messengers" }).waitFor();
    await page.getByRole("button", { name: "Add the messenger" }).click();
    assert.equal(await fieldError(page, "Name"), "name is required");
    await page.getByLabel("Name", { exact: true }).fill("Paul");
    await page.getByLabel("Phone (optional)").fill("06 12 34 56 78");
    await page.getByRole("button", { name: "Add the messenger" }).click();
    await page.getByRole("cell", { name: "Paul", exact: true }).waitFor();
    await page.getByRole("button", { name: "Change Paul" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Paul Martin");
    await page.getByRole("button", { name: "Save the messenger" }).click();
    await page.getByRole("cell", { name: "Paul Martin", exact: true }).waitFor();
    await checkPage(page, "messengers");
    await screenshot(page, "staff-messengers");

    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test("a read-only person reads the fleet but is offered no change", async () => {
    const vehicle = await bed.ops<{ id: number }>("POST", "/vehicles", { external_id: "BIKE-7", provider: "acme" });
    assert.equal(vehicle.status, 201);
    const { page } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "read_only" });
    await page.goto(`${bed.pageUrl}/staff/fleet`);
    await page.getByRole("link", { name: "BIKE-7" }).click();
    await page.getByRole("heading", { name: "Vehicle BIKE-7" }).waitFor();
    assert.equal(await page.locator("main form").count(), 0);
    assert.equal(await page.locator("main button").count(), 0);
    const forced = await forcedCall(page, "PATCH", `/ops/v1/vehicles/${vehicle.body.id}`, { label: "mine" });
    assert.deepEqual(forced, { status: 403, body: { errors: ["read_only may not PATCH /ops/v1/vehicles/{id}"] } });
    await page.goto(`${bed.pageUrl}/staff/fleet/messengers`);
    await page.getByRole("heading", { name: "Messengers" }).waitFor();
    assert.equal(await page.locator("main form").count(), 0);
    await checkPage(page, "messengers, read-only");
    await page.context().close();
  });
});
