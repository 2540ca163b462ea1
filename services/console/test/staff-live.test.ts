/**
 * The live map in Chromium (`/staff/live`), on the whole system: vehicles in active rounds with
 * their state in words and shape, positions posted to geo-ingest moving a vehicle within 2 s,
 * a vehicle on the map and in the table opening its round; the map stopped by a sign-out
 * elsewhere; axe and the keyboard; a screenshot.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { launchChromium } from "@dos/service-kit/testing-browser";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../../../e2e/src/client.ts";
import { GEO_OPS_TOKEN, operator, type Round } from "../../../e2e/src/operator.ts";
import { newPage, signInWithApp } from "./chromium-staff.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { checkPage, SCREENSHOTS, screenshot } from "./page-checks.ts";

let bed: ConsoleBed;
let browser: Browser;
let account: SeededAccount;
before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // geo-ingest's operator endpoint: the test reads a round's track to know a position is stored.
  bed = await startConsoleBed({ GEO_OPS_TOKEN, CONSOLE_LIVE_SNAPSHOT_SECONDS: "5" });
  [account] = seedAccounts(bed.system) as [SeededAccount];
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await bed?.close();
});

async function newRound(reference: string): Promise<Round> {
  const created = await call(
    `${bed.system.url("delivery-api")}/api/v2/deliveries`,
    "POST",
    clientHeaders(account),
    outboundDelivery(account, reference),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return operator(bed.system.opsUrl, bed.system.url("geo-ingest")).startRound([(created.body as { id: number }).id]);
}

/** A round whose tasks' slots ended a minute ago: late, as delivery-api says, while its vehicle reports. */
async function makeLate(round: Round) {
  const client = new pg.Client({ connectionString: bed.system.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(
      `update delivery.tasks set slot_starting_at = now() - interval '3 hours', slot_ending_at = now() - interval '1 minute'
       where delivery_id = any($1::bigint[])`,
      [round.tasks.map((t) => t.delivery_id)],
    );
  } finally {
    await client.end();
  }
}

/** The vehicle's button in the page (the table's), by the contract's name. */
const vehicleButton = (page: Page, externalId: string, state: string) =>
  page.getByRole("button", { name: `Vehicle ${externalId}: ${state}`, exact: true });

describe("the live map", () => {
  test("vehicles by state; positions posted to geo-ingest move a vehicle within 2 s; a vehicle opens its round", async () => {
    const fleet = operator(bed.system.opsUrl, bed.system.url("geo-ingest"));
    const [moving, late, silent, corner] = [
      await newRound("live-moving"),
      await newRound("live-late"),
      await newRound("live-silent"),
      await newRound("live-corner"),
    ] as [Round, Round, Round, Round];
    await makeLate(late);
    // The moving vehicle between the two others: the map, framed on all three, has it at its centre.
    const now = Date.now();
    await fleet.storedPosition(corner, 48.85, 2.34, new Date(now - 3000));
    await fleet.storedPosition(moving, 48.86, 2.35, new Date(now - 3000));
    await fleet.storedPosition(late, 48.87, 2.36, new Date(now - 3000));
    // delivery-api, which the page's first reading comes from, has them once it took them from the bus.
    await waitFor(async () => {
      const live = await bed.ops<{ vehicles: Array<{ round_id: number; position: unknown }> }>("GET", "/fleet/live");
      const placed = live.body.vehicles.filter((v) => v.position !== null).map((v) => v.round_id);
      return [moving, late, corner].every((r) => placed.includes(r.id)) ? true : undefined;
    }, 20_000);

    const { page, foreign, errors } = await newPage(browser, bed);
    await signInWithApp(bed, page, { role: "dispatcher" });
    await page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name: "Live map" }).click();
    await page.getByRole("heading", { name: "Live map", level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, "/staff/live");

    // Each state in words (the button's name and the table's State column) and by shape.
    const movingButton = vehicleButton(page, moving.vehicle.externalId, "on time");
    await movingButton.waitFor();
    await vehicleButton(page, late.vehicle.externalId, "late").waitFor();
    await vehicleButton(page, silent.vehicle.externalId, "no position for 2 min").waitFor();
    assert.equal(await movingButton.getAttribute("data-lat"), "48.86");
    assert.equal(await movingButton.getAttribute("data-lng"), "2.35");
    assert.match((await movingButton.getAttribute("data-vehicle-id")) ?? "", /^\d+$/);
    const table = page.getByRole("table", { name: "Vehicles in active rounds" });
    const row = table.getByRole("row").filter({ has: movingButton });
    assert.match((await row.textContent()) ?? "", new RegExp(`Round #${moving.id}on time\\d+ s ago`));
    const silentRow = table
      .getByRole("row")
      .filter({ has: vehicleButton(page, silent.vehicle.externalId, "no position for 2 min") });
    assert.match((await silentRow.textContent()) ?? "", /no position for 2 minnone$/);
    assert.equal(await page.locator(".live-triangle").filter({ hasText: "late" }).count(), 2, "legend and row");

    // Drawn on the map: the three vehicles with a position.
    await page.locator('[data-testid="live-map"][data-drawn="3"]').waitFor();
    // Clicking the vehicle on the map (at the centre of the framed fleet) opens its round.
    const canvas = page.locator('[data-testid="live-map"] canvas');
    const box = (await canvas.boundingBox()) as { x: number; y: number; width: number; height: number };
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForURL(`**/staff/dispatch/rounds/${moving.id}`);
    await page.goBack();
    await movingButton.waitFor();

    // Positions posted to geo-ingest move it: each seen on the page within 2 s of its post.
    const vehicleId = await movingButton.getAttribute("data-vehicle-id");
    const lags: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const latitude = 48.86 + i / 1000;
      const posted = Date.now();
      assert.equal(await fleet.position(moving.vehicle, latitude, 2.35, new Date()), 200);
      await page.locator(`[data-vehicle-id="${vehicleId}"][data-lat="${latitude}"]`).waitFor({ timeout: 15_000 });
      lags.push(Date.now() - posted);
    }
    console.log(`position posted to geo-ingest → on the page: ${lags.join(", ")} ms`);
    for (const lag of lags) assert.ok(lag < 2000, `a position was on the page ${lag} ms after it was posted`);

    await checkPage(page, "live map");
    await screenshot(page, "staff-live");

    // From the keyboard: the table's vehicle button opens its round.
    await vehicleButton(page, late.vehicle.externalId, "late").focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(`**/staff/dispatch/rounds/${late.id}`);
    await page.goBack();
    // And the round link, by its name.
    await table.getByRole("link", { name: `Round #${corner.id}`, exact: true }).click();
    await page.waitForURL(`**/staff/dispatch/rounds/${corner.id}`);

    // Signed out elsewhere (another tab): the map says it stopped, and offers the way back in.
    await page.goBack();
    await movingButton.waitFor();
    const signedOut = await page.evaluate(`(async () => {
      const { csrf_token } = await (await fetch("/api/staff/session")).json();
      return (await fetch("/api/staff/session", { method: "DELETE", headers: { "x-csrf-token": csrf_token } })).status;
    })()`);
    assert.equal(signedOut, 204);
    await page.getByRole("status").filter({ hasText: "The live map stopped: signed out." }).waitFor();
    await page.getByRole("link", { name: "Sign in again" }).waitFor();

    assert.deepEqual(foreign, [], "nothing loaded from elsewhere");
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});
