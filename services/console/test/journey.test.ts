/**
 * A shop's day in the console, in real Chromium, as far as the console goes today: accept the
 * invitation and set a password, sign in, sign out; the refusals a person meets (a used link,
 * a page that does not exist). Every page is checked (axe-core, keyboard) and photographed.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { launchChromium } from "@dos/service-kit/testing-browser";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { clientHeaders, outboundDelivery, seedAccounts } from "../../../e2e/src/client.ts";
import { startWebhookReceiver } from "../../../e2e/src/webhook-receiver.ts";
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

const PASSWORD = "a long and memorable pass phrase";

/** A page that records anything loaded from elsewhere than the console, and any script error. */
async function newPage(): Promise<{ page: Page; foreign: string[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  const page = await context.newPage();
  const foreign: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => {
    if (!request.url().startsWith(bed.pageUrl)) foreign.push(request.url());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return { page, foreign, errors };
}

/** A page signed in as a person of the account that owns this e-mail (invited, password set). */
async function signedInPage(email: string) {
  await bed.invite(email);
  const link = await bed.lastLinkTo(email);
  const opened = await newPage();
  await opened.page.goto(link);
  await opened.page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
  await opened.page.getByLabel("New password again").fill(PASSWORD);
  await opened.page.getByRole("button", { name: "Set password and sign in" }).click();
  await opened.page.getByRole("heading", { name: "API tokens" }).waitFor();
  return opened;
}

/** A datetime-local input's value for a moment `hours` from now, in the browser's (UTC) zone. */
const localInput = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString().slice(0, 16);

describe("deliveries", () => {
  test("create a delivery through the form, a 422 shown beside its field; then its page and the list", async () => {
    const [shop, other] = seedAccounts(bed.system);
    assert.ok(shop && other);
    const { page, foreign, errors } = await signedInPage(shop.email);
    const receiver = await startWebhookReceiver();

    // A webhook endpoint first, its signing secret shown once, used by the receiver to verify.
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByRole("button", { name: "Register the endpoint" }).click();
    const secret = (await page.getByTestId("new-secret").textContent()) ?? "";
    assert.match(secret, /^whsec_/);
    receiver.useSecret(secret);

    await page.getByRole("link", { name: "Deliveries" }).click();
    await page.getByRole("heading", { name: "Deliveries" }).waitFor();
    await page.getByRole("link", { name: "New delivery" }).click();
    await page.getByRole("heading", { name: "New delivery" }).waitFor();

    await page.getByLabel("Client order reference").fill("CONSOLE-1");
    await page.getByLabel("Name").fill("Jeanne Martin");
    await page.getByLabel("Phone").fill("+33612345678");
    await page.getByLabel("Address").fill("12 Rue de la Paix");
    await page.getByLabel("Postal code").fill("99999");
    await page.getByLabel("City").fill("Paris");
    await page.getByLabel("From").fill(localInput(24));
    await page.getByLabel("To").fill(localInput(26));
    await page.getByRole("button", { name: "Create the delivery" }).click();
    // The API's message, beside the field it names, and tied to it for assistive technology.
    const postalCode = page.getByLabel("Postal code");
    const described = page.locator(".field-error", {
      hasText: "dropoff.place.postal_code 99999 is not in a delivered zone",
    });
    await described.waitFor();
    assert.equal(await postalCode.getAttribute("aria-invalid"), "true");
    assert.equal(await postalCode.getAttribute("aria-describedby"), await described.getAttribute("id"));
    await checkPage(page, "new delivery (refused)");
    await screenshot(page, "new-delivery");

    await postalCode.fill(shop.postal_codes[0] as string);
    await page.getByRole("button", { name: "Create the delivery" }).click();
    await page.getByRole("heading", { name: /^Delivery #\d+$/ }).waitFor();
    const id = Number((await page.getByRole("heading", { name: /^Delivery #/ }).textContent())?.replace(/\D/g, ""));
    assert.ok(id > 0);
    await page.getByText("CONSOLE-1").waitFor();
    await checkPage(page, "delivery");
    await screenshot(page, "delivery");

    // The integrator sees the same delivery through the API, priced.
    const api = bed.system.url("delivery-api");
    const answer = await fetch(`${api}/api/v2/deliveries/${id}`, { headers: clientHeaders(shop) });
    const seen = (await answer.json()) as { client_order_reference: string; status: string };
    assert.equal(seen.client_order_reference, "CONSOLE-1");
    assert.equal(await page.getByTestId("status").textContent(), seen.status);
    // Its price with the tariff's lines, as the API keeps them (the statement's breakdown).
    const priced = await fetch(`${api}/api/v2/deliveries/${id}/price`, { headers: clientHeaders(shop) });
    const price = (await priced.json()) as {
      price_cents: number;
      lines: Array<{ label: string; amount_cents: number }>;
    };
    const breakdown = page.getByTestId("price-breakdown");
    await page.getByTestId("price-total").waitFor();
    assert.deepEqual(
      await breakdown.locator("tbody tr").allTextContents(),
      price.lines.map((line) => `${line.label}€${(line.amount_cents / 100).toFixed(2)}`),
    );
    const total = price.price_cents === null ? "not priced" : `€${(price.price_cents / 100).toFixed(2)}`;
    assert.equal(await page.getByTestId("price-total").textContent(), total);

    // Changed: a slot that ends before it starts is refused beside its field, then a new reference.
    await page.getByRole("button", { name: "Change the delivery" }).click();
    const edit = page.getByRole("form", { name: "Change the delivery" });
    await edit.getByLabel("Dropoff to").fill(localInput(23));
    await edit.getByRole("button", { name: "Save the changes" }).click();
    await edit.locator(".field-error", { hasText: /^dropoff\.slot_ending_at / }).waitFor();
    await edit.getByLabel("Dropoff to").fill(localInput(26));
    await edit.getByLabel("Client order reference").fill("CONSOLE-1B");
    await edit.getByRole("button", { name: "Save the changes" }).click();
    await page.getByText("CONSOLE-1B").waitFor();

    await page.getByRole("button", { name: "Cancel the delivery" }).click();
    await page.getByRole("button", { name: `Confirm: cancel delivery #${id}` }).click();
    await page.getByTestId("status").getByText("cancelled").waitFor();
    assert.equal(await page.getByRole("button", { name: "Cancel the delivery" }).count(), 0);
    // The timeline: the delivery's events, oldest first, the cancellation among them without a reload.
    const timeline = page.getByTestId("timeline").getByRole("listitem");
    await timeline.filter({ hasText: "Cancelled" }).waitFor();
    assert.deepEqual(
      (await timeline.allTextContents()).map((text) => text.replace(/^.* UTC /, "")),
      ["Created (Saved)", "Changed", "Cancelled"],
    );

    await page.getByRole("link", { name: "Deliveries" }).click();
    await page.getByLabel("Client order reference").fill("CONSOLE-1B");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: `#${id}` }).waitFor();

    // Filtered by status and creation day too: the URL holds the filters, so a reload keeps them.
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel("Client order reference").fill("");
    await page.getByLabel("Status").selectOption("cancelled");
    await page.getByLabel("Created from").fill(today);
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/status=cancelled/);
    assert.equal(new URL(page.url()).searchParams.get("created_from"), today);
    await page.reload();
    await page.getByTestId("total").getByText("1 delivery matches these filters").waitFor();
    await page.getByRole("link", { name: `#${id}` }).waitFor();
    assert.equal(await page.getByLabel("Status").inputValue(), "cancelled");
    await page.getByLabel("Status").selectOption("delivered");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByTestId("total").getByText("0 deliveries match these filters").waitFor();
    // A range that ends before it starts: the API's 422, beside the field it names.
    await page.getByLabel("Created until").fill("2020-01-01");
    await page.getByRole("button", { name: "Search" }).click();
    const until = page.getByLabel("Created until");
    const refused = page.locator(".field-error", {
      hasText: "querystring.created_to must not be before querystring.created_from",
    });
    await refused.waitFor();
    assert.equal(await until.getAttribute("aria-describedby"), await refused.getAttribute("id"));
    await checkPage(page, "deliveries (filtered)");
    await page.getByRole("link", { name: "Clear filters" }).click();
    await page.getByLabel("Client order reference").fill("CONSOLE-1B");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: `#${id}` }).waitFor();
    await checkPage(page, "deliveries");
    await screenshot(page, "deliveries");

    // Its events reached the endpoint, signed, and the attempts are listed with code and latency.
    await page.getByRole("link", { name: "Webhooks" }).click();
    const endpoint = page.getByRole("region", { name: `Endpoint ${receiver.url}` });
    await endpoint
      .getByRole("row")
      .filter({ hasText: `#${id}` })
      .filter({ hasText: "delivered" })
      .first()
      .waitFor();
    assert.ok(receiver.received.some((r) => r.event.delivery_id === id && r.event.type === "delivery.created"));
    assert.deepEqual(receiver.rejected, [], "every webhook verified with the secret shown once");
    await checkPage(page, "webhooks");
    await screenshot(page, "webhooks");
    const before = receiver.received.length;
    await endpoint.getByLabel("Replay the events since").fill(localInput(-1));
    await endpoint.getByRole("button", { name: "Replay" }).click();
    const replayed = await endpoint.getByRole("status").textContent();
    const count = Number(/^(\d+) events sent again$/.exec(replayed ?? "")?.[1]);
    assert.ok(count >= 3, `replayed: ${replayed}`);
    for (let i = 0; i < 100 && receiver.received.length < before + count; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(receiver.received.length, before + count, "the replayed events arrived");
    await endpoint.getByRole("button", { name: `Rotate the secret of ${receiver.url}` }).click();
    const rotated = (await page.getByTestId("new-secret").textContent()) ?? "";
    assert.ok(rotated.startsWith("whsec_") && rotated !== secret, "a new secret, shown once");
    await receiver.close();

    // A failed delivery (the courier's doing, written here as the dispatch would) is redelivered.
    const failedId = await (async () => {
      const answer = await fetch(`${api}/api/v2/deliveries`, {
        method: "POST",
        headers: { ...clientHeaders(shop), "content-type": "application/json" },
        body: JSON.stringify(outboundDelivery(shop, "FAILED-1")),
      });
      return ((await answer.json()) as { id: number }).id;
    })();
    const db = new pg.Client({ connectionString: bed.system.env.DATABASE_URL });
    await db.connect();
    await db.query("update delivery.deliveries set status = 'failed' where id = $1", [failedId]);
    await db.end();
    await page.goto(`${bed.pageUrl}/deliveries/${failedId}`);
    const redelivery = page.getByRole("form", { name: "Ask a redelivery" });
    await redelivery.getByLabel("New slot from").fill(localInput(48));
    await redelivery.getByLabel("New slot to").fill(localInput(46));
    await redelivery.getByRole("button", { name: "Ask the redelivery" }).click();
    await redelivery.locator(".field-error", { hasText: /^dropoff\.slot_ending_at / }).waitFor();
    await redelivery.getByLabel("New slot to").fill(localInput(50));
    await redelivery.getByRole("button", { name: "Ask the redelivery" }).click();
    await page.getByRole("heading", { name: new RegExp(`^Delivery #(?!${failedId}$)\\d+$`) }).waitFor();
    await page.goto(`${bed.pageUrl}/deliveries/${failedId}`);
    await page.getByText(/^Redelivered as/).waitFor();
    assert.equal(await page.getByRole("form", { name: "Ask a redelivery" }).count(), 0);

    // The month's statement lists it: cancelled, billed nothing.
    await page.getByRole("link", { name: "Billing" }).click();
    await page.getByLabel("Month").fill(localInput(24).slice(0, 7));
    await page.getByRole("button", { name: "Show the statement" }).click();
    const line = page.getByRole("row").filter({ hasText: `#${id}` });
    await line.waitFor();
    assert.match((await line.textContent()) ?? "", /cancelled.*€0\.00$/);
    await checkPage(page, "billing");
    await screenshot(page, "billing");

    // Another account's delivery, by its URL: the not-found page.
    const foreignDelivery = await fetch(`${api}/api/v2/deliveries`, {
      method: "POST",
      headers: { ...clientHeaders(other), "content-type": "application/json" },
      body: JSON.stringify(outboundDelivery(other, "OTHER-1")),
    });
    assert.equal(foreignDelivery.status, 201);
    const otherId = ((await foreignDelivery.json()) as { id: number }).id;
    await page.goto(`${bed.pageUrl}/deliveries/${otherId}`);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    assert.equal(await page.getByText("OTHER-1").count(), 0);

    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});

describe("a delivery under way", () => {
  test("watch it move to delivered as the courier simulator runs, on the map and the timeline", async () => {
    const [, testShop] = seedAccounts(bed.system);
    assert.ok(testShop);
    const simulator = await bed.ops("PUT", `/accounts/${testShop.account_id}/courier_simulator`, {
      enabled: true,
      step_ms: 2000,
    });
    assert.equal(simulator.status, 200, JSON.stringify(simulator.body));
    const { page, foreign, errors } = await signedInPage(testShop.email);
    const api = bed.system.url("delivery-api");
    const answer = await fetch(`${api}/api/v2/deliveries`, {
      method: "POST",
      headers: { ...clientHeaders(testShop), "content-type": "application/json" },
      body: JSON.stringify(outboundDelivery(testShop, "SIMULATED-1")),
    });
    assert.equal(answer.status, 201);
    const id = ((await answer.json()) as { id: number }).id;

    await page.goto(`${bed.pageUrl}/deliveries/${id}`);
    // The map drew its style (WebGL) in its own chunk; the courier appears once the dropoff started.
    await page.locator('[data-testid="map"][data-loaded]').waitFor({ timeout: 30_000 });
    const position = page.getByTestId("courier-position");
    await position
      .getByText(/^Courier at/)
      .waitFor({ timeout: 60_000 })
      .catch(async (error) => {
        const live = await (await page.request.get(`${bed.pageUrl}/api/deliveries/${id}/live`)).text();
        throw new Error(`no courier on the map; the BFF answers ${live}: ${error}`);
      });
    const courier = page.getByRole("img", { name: "Courier" });
    const firstText = await position.textContent();
    const firstPlace = await courier.getAttribute("style");
    await checkPage(page, "delivery under way (map)");
    await screenshot(page, "delivery-map");
    // A new position stored: the marker moves without a reload, and the position written under the map.
    let moved = firstText;
    for (let i = 0; i < 120 && (moved === firstText || !moved?.startsWith("Courier at")); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      moved = await position.textContent();
    }
    assert.notEqual(moved, firstText, "the courier moved on the map without a reload");
    assert.match(moved ?? "", /^Courier at/);
    assert.notEqual(await courier.getAttribute("style"), firstPlace, "its marker too");
    assert.match(firstPlace ?? "", /translate/, "the courier's marker is placed on the map");

    await page.getByTestId("status").getByText("delivered").waitFor({ timeout: 90_000 });
    const timeline = page.getByTestId("timeline").getByRole("listitem");
    await timeline.filter({ hasText: "Picked up → Delivered" }).waitFor();
    const steps = (await timeline.allTextContents()).map((text) => text.replace(/^.* UTC /, ""));
    assert.equal(steps[0], "Created (Saved)");
    assert.ok(steps.includes("Scheduled → Picked up"), steps.join(" | "));
    assert.equal(steps.at(-1), "Picked up → Delivered");
    await checkPage(page, "delivery delivered (map)");
    assert.deepEqual(foreign, [], "no request left the console (no third-party tiles)");
    assert.deepEqual(errors, []);
  });
});

describe("a new person's first day", () => {
  test("accept the invitation, set a password, see the account, sign out, sign in again", async () => {
    const user = await bed.newAccountUser("test");
    await bed.invite(user.email);
    const link = await bed.lastLinkTo(user.email);
    const { page, foreign, errors } = await newPage();

    await page.goto(link);
    await page.getByRole("heading", { name: "Welcome" }).waitFor();
    await checkPage(page, "invitation");
    await screenshot(page, "invitation");
    await page.getByLabel("New password (12 characters or more)").fill("short");
    await page.getByLabel("New password again").fill("short");
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("alert").getByText("password must be at least 12 characters").waitFor();
    await page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
    await page.getByLabel("New password again").fill(PASSWORD);
    await page.getByRole("button", { name: "Set password and sign in" }).click();

    await page.getByRole("heading", { name: /Fleurs/ }).waitFor();
    await page.getByRole("status").getByText("Test account").waitFor();

    // A token, shown once, used at once from a plain HTTP client against the client API.
    await page.getByRole("button", { name: "Create a token" }).click();
    const token = (await page.getByTestId("new-token").textContent()) ?? "";
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    await page.getByRole("button", { name: `Revoke token ${token.slice(0, 4)}…` }).waitFor();
    const api = `${bed.system.url("delivery-api")}/api/v2/deliveries`;
    const asIntegrator = { "x-user-email": user.email, "x-user-token": token };
    assert.equal((await fetch(api, { headers: asIntegrator })).status, 200);
    // The token's use shows in the list (written in the background by delivery-api).
    const tokenRow = page.getByRole("row").filter({ hasText: `${token.slice(0, 4)}…` });
    assert.match((await tokenRow.textContent()) ?? "", /never/);
    for (let i = 0; i < 30 && /never/.test((await tokenRow.textContent()) ?? ""); i++) {
      await page.reload();
      await page.getByRole("heading", { name: "API tokens" }).waitFor();
    }
    assert.match((await tokenRow.textContent()) ?? "", /UTC.*UTC/, "created and last used");
    await page.reload();
    await page.getByRole("heading", { name: "API tokens" }).waitFor();
    await page.getByRole("button", { name: "Create a token" }).click();
    await page.getByTestId("new-token").waitFor();
    await checkPage(page, "account");
    await screenshot(page, "account");
    await page.reload();
    await page.getByRole("heading", { name: "API tokens" }).waitFor();
    assert.equal(await page.getByTestId("new-token").count(), 0, "the token is shown once");
    await page.getByRole("button", { name: `Revoke token ${token.slice(0, 4)}…` }).click();
    await page.getByRole("button", { name: `Revoke token ${token.slice(0, 4)}…` }).waitFor({ state: "detached" });
    assert.equal((await fetch(api, { headers: asIntegrator })).status, 401, "a revoked token is refused");

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByLabel("E-mail").fill(user.email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("e-mail or password is wrong").waitFor();
    await checkPage(page, "sign-in");
    await screenshot(page, "sign-in");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: /Fleurs/ }).waitFor();

    // The used invitation link is refused in the page, not only by the API.
    await page.goto(link);
    await page.getByLabel("New password (12 characters or more)").fill(PASSWORD);
    await page.getByLabel("New password again").fill(PASSWORD);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("alert").getByText("invitation link has expired or was already used").waitFor();

    assert.deepEqual(foreign, [], "nothing loaded from anywhere but the console");
    assert.deepEqual(errors, [], "no script error (a CSP refusal included)");
    await page.context().close();
  });

  test("a page that does not exist is the not-found page; a signed-out visit goes to sign-in", async () => {
    const { page } = await newPage();
    await page.goto(`${bed.pageUrl}/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.goto(`${bed.pageUrl}/no/such/page`);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    await checkPage(page, "not found");
    await page.context().close();
  });

  test("forgot password: the reset page answers the same for anyone", async () => {
    const { page } = await newPage();
    await page.goto(`${bed.pageUrl}/sign-in`);
    await page.getByRole("link", { name: "Forgot your password?" }).click();
    await page.getByLabel("E-mail").fill("nobody@shop.example");
    await page.getByRole("button", { name: "Send a reset link" }).click();
    await page.getByRole("status").getByText("if this e-mail has a console account").waitFor();
    await checkPage(page, "password reset");
    await page.context().close();
  });
});
