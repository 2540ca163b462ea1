/**
 * The dispatch board and the round page in real Chromium against the whole system: a dispatcher
 * opens a day with deliveries to assign (created by a shop through the client API), plans a
 * round, assigns two deliveries with the keyboard alone, reorders (a refused order shown as the
 * API words it), starts the round and its tasks, completes a drop-off with a PNG proof (then
 * shown, through the console) and fails a pickup with a reason; the board follows each change;
 * a delivery another dispatcher assigned meanwhile is refused by name, the ones before it kept;
 * a dispatcher made read-only while the page is open meets delivery-api's 403 as a message; a
 * busy day comes in the API's pages, the rest by "Show more".
 * A read-only person is offered no change, and delivery-api refuses one forced from the page
 * (403). A shop user, or no one, gets 404 for the pages and the forwarder; the forwarder takes
 * images on the proof uploads only, within the upload limit. axe-core, the keyboard and
 * screenshots on both pages.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { crc32, deflateSync } from "node:zlib";
import { waitFor } from "@dos/service-kit/testing";
import { launchChromium } from "@dos/service-kit/testing-browser";
import type { Browser, Locator, Page } from "playwright-core";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../../../e2e/src/client.ts";
import { forcedCall, newPage, signInWithApp } from "./chromium-staff.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { Browser as HttpBrowser } from "./http-browser.ts";
import { checkPage, SCREENSHOTS, screenshot } from "./page-checks.ts";
import { signedInShopUser, signedInStaff } from "./staff-session.ts";

/** Until `check` holds (polled from here: the pages' CSP refuses waitForFunction's evaluated predicates). */
const until = (check: () => Promise<boolean>, what = "what the page should show") =>
  waitFor(async () => ((await check()) ? true : undefined), 30_000, what);

/** A PNG of one colour, `width` × `height`: a proof photo that shows in a screenshot. */
function solidPng(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [r, g, b]).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", pixels),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

let bed: ConsoleBed;
let browser: Browser;
let shop: SeededAccount;
before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  bed = await startConsoleBed();
  [shop] = seedAccounts(bed.system) as [SeededAccount];
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await bed?.close();
});

/** A delivery of the shop for `days` days from now (2 unless told; a day of `timeZone`): its id and that day. */
async function newDelivery(reference: string, timeZone: string, days = 2) {
  const body = outboundDelivery(shop, reference);
  const start = new Date(Date.now() + days * 24 * 3600_000);
  start.setUTCHours(12, 0, 0, 0);
  body.dropoff.slot_starting_at = start.toISOString();
  body.dropoff.slot_ending_at = new Date(start.getTime() + 2 * 3600_000).toISOString();
  const created = await call(`${bed.system.url("delivery-api")}/api/v2/deliveries`, "POST", clientHeaders(shop), body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const day = new Intl.DateTimeFormat("en-CA", { timeZone }).format(start);
  return { id: (created.body as { id: number }).id, day };
}

/** A messenger and a vehicle of the operator's, made by automation (the fleet pages are tested elsewhere). */
async function newCrew(name: string) {
  const messenger = await bed.ops<{ id: number; name: string }>("POST", "/messengers", { name });
  assert.equal(messenger.status, 201, JSON.stringify(messenger.body));
  const externalId = `VAN-${name.replace(/\W/g, "").toUpperCase()}-${Date.now() % 100_000}`;
  const vehicle = await bed.ops<{ id: number }>("POST", "/vehicles", { external_id: externalId, provider: "acme" });
  assert.equal(vehicle.status, 201, JSON.stringify(vehicle.body));
  return { messengerId: messenger.body.id, vehicleId: vehicle.body.id, externalId };
}

/** Presses Tab until `target` has the focus (at most 200 presses): the keyboard's way to a control. */
async function tabTo(page: Page, target: Locator) {
  for (let i = 0; i < 200; i++) {
    if (await target.evaluate((element) => element === element.ownerDocument.activeElement)) return;
    await page.keyboard.press("Tab");
  }
  assert.fail(`Tab never reached ${target}`);
}

const browserZone = (page: Page) =>
  page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone") as Promise<string>;
const toAssignList = (page: Page) => page.getByRole("region", { name: "To assign" });
const roundsList = (page: Page) =>
  page.locator("section", { has: page.getByRole("heading", { name: "Rounds", exact: true }) });
const taskItems = (page: Page) => page.getByRole("list", { name: "Tasks" }).locator(":scope > li");

describe("the dispatch board and a round", () => {
  test("a dispatcher plans a round, assigns by keyboard, takes one out, reorders, and records progress with a proof photo", async () => {
    const { page, foreign, errors } = await newPage(browser, bed);
    const zone = await browserZone(page);
    const a = await newDelivery("DISPATCH-A", zone);
    const b = await newDelivery("DISPATCH-B", zone);
    const c = await newDelivery("DISPATCH-C", zone);
    const crew = await newCrew("Paul Dispatch");
    await signInWithApp(bed, page, { role: "dispatcher" });

    // The shell leads to the board (today); the day then comes from the URL.
    await page.getByRole("navigation", { name: "Staff" }).getByRole("link", { name: "Dispatch" }).click();
    await page.getByRole("heading", { name: "Dispatch", level: 1 }).waitFor();
    await page.goto(`${bed.pageUrl}/staff/dispatch?date=${a.day}`);
    assert.equal(await page.getByLabel("Day").inputValue(), a.day);
    const checkbox = (id: number) =>
      toAssignList(page).getByRole("checkbox", { name: new RegExp(`^Delivery #${id},`) });
    for (const delivery of [a, b, c]) await checkbox(delivery.id).waitFor();
    // Each named by its delivery, its main task's kind and its address.
    await toAssignList(page)
      .getByRole("checkbox", {
        name: `Delivery #${a.id}, drop-off, 12 Rue de la Paix, ${shop.postal_codes[0]} Paris`,
        exact: true,
      })
      .waitFor();

    // A new round for the messenger and the vehicle: listed, and chosen for the assignment.
    await page.getByLabel("Messenger").selectOption({ label: "Paul Dispatch" });
    await page.getByLabel("Vehicle").selectOption({ label: crew.externalId });
    await page.getByRole("button", { name: "Create round" }).click();
    const created = await page
      .getByRole("status")
      .filter({ hasText: /^Round #\d+ created/ })
      .textContent();
    const roundId = Number(/Round #(\d+)/.exec(created ?? "")?.[1]);
    assert.ok(roundId > 0, created ?? "");
    await roundsList(page)
      .getByRole("link", { name: `Round #${roundId}`, exact: true })
      .waitFor();
    assert.equal(await page.getByLabel("Round").inputValue(), String(roundId), "the new round is the one chosen");
    assert.match(
      (await page.getByLabel("Round").locator("option:checked").textContent()) ?? "",
      new RegExp(`^Round #${roundId} · Paul Dispatch · ${crew.externalId}$`),
    );
    await checkPage(page, "dispatch board");

    // Assigning with the keyboard alone: Tab to each box, Space ticks it, Tab to the button, Enter.
    await tabTo(page, checkbox(a.id));
    await page.keyboard.press("Space");
    await tabTo(page, checkbox(b.id));
    await page.keyboard.press("Space");
    await tabTo(page, checkbox(c.id));
    await page.keyboard.press("Space");
    assert.equal(await checkbox(a.id).isChecked(), true);
    await page.getByText("3 selected").waitFor();
    await tabTo(page, page.getByRole("button", { name: "Assign selected" }));
    await page.keyboard.press("Enter");
    await page
      .getByRole("status")
      .filter({ hasText: `3 deliveries assigned to round #${roundId}.` })
      .waitFor();
    // The board follows: nothing left to assign; the round holds their six tasks.
    await page.getByText("Nothing to assign on this day.").waitFor();
    assert.equal(await toAssignList(page).getByRole("checkbox").count(), 0);
    const roundEntry = roundsList(page)
      .getByRole("listitem")
      .filter({ hasText: `Round #${roundId}` });
    await until(async () => /planned.*6 tasks, 0 done/.test((await roundEntry.textContent()) ?? ""));
    assert.match(
      (await roundEntry.textContent()) ?? "",
      new RegExp(`Messenger: Paul Dispatch.*Vehicle: ${crew.externalId}`),
    );

    // The round's page: its tasks in order, pickup before drop-off.
    await roundsList(page)
      .getByRole("link", { name: `Round #${roundId}`, exact: true })
      .click();
    await page.getByRole("heading", { name: `Round #${roundId}`, level: 1 }).waitFor();
    assert.equal(await page.getByTestId("round-state").textContent(), "planned");
    const order = async () =>
      (await taskItems(page).locator(".task-title").allTextContents())
        .map((title) => /Delivery #\d+ (pickup|drop-off)/.exec(title)?.[0].replace(/ (?=pickup|drop-off)/, ":"))
        .join(" ");
    await until(async () => (await taskItems(page).count()) === 6);
    // C leaves the round (none of its tasks started): it is to assign again.
    await page.getByRole("button", { name: `Take out of round (Delivery #${c.id})` }).click();
    await until(async () => (await taskItems(page).count()) === 4);
    assert.equal(
      await order(),
      `Delivery #${a.id}:pickup Delivery #${a.id}:drop-off Delivery #${b.id}:pickup Delivery #${b.id}:drop-off`,
    );
    // B's pickup moves up, before A's drop-off.
    await page.getByRole("button", { name: `Move up (Delivery #${b.id}, pickup)` }).click();
    await until(
      async () =>
        (await order()) ===
        `Delivery #${a.id}:pickup Delivery #${b.id}:pickup Delivery #${a.id}:drop-off Delivery #${b.id}:drop-off`,
      "the new order",
    );
    assert.equal(
      await page.getByRole("button", { name: `Move up (Delivery #${a.id}, pickup)` }).isDisabled(),
      true,
      "the first task does not move up",
    );
    // Back down, then once more: B's drop-off cannot come before its pickup, the API's 422 as it words it.
    await page.getByRole("button", { name: `Move down (Delivery #${b.id}, pickup)` }).click();
    await until(
      async () =>
        (await order()) ===
        `Delivery #${a.id}:pickup Delivery #${a.id}:drop-off Delivery #${b.id}:pickup Delivery #${b.id}:drop-off`,
      "the order back",
    );
    await page.getByRole("button", { name: `Move down (Delivery #${b.id}, pickup)` }).click();
    await page
      .getByRole("alert")
      .getByText(
        new RegExp(`^task_ids: task \\d+ \\(dropoff of delivery ${b.id}\\) cannot come before task \\d+, its pickup$`),
      )
      .waitFor();

    // Under way: the round, then A's pickup, started and completed.
    await page.getByRole("button", { name: "Start round" }).click();
    await until(async () => (await page.getByTestId("round-state").textContent()) === "started");
    const item = (id: number, kind: string) =>
      taskItems(page).filter({ has: page.locator(".task-title", { hasText: `Delivery #${id} ${kind} ` }) });
    await page.getByRole("button", { name: `Start task (Delivery #${a.id}, pickup)` }).click();
    await item(a.id, "pickup").getByText("started", { exact: true }).waitFor();
    await page.getByRole("button", { name: `Complete task (Delivery #${a.id}, pickup)` }).click();
    await item(a.id, "pickup").getByText("completed", { exact: true }).waitFor();

    // A's drop-off completed with a PNG proof, which the page then shows (through the console).
    await page.getByRole("button", { name: `Start task (Delivery #${a.id}, drop-off)` }).click();
    const dropoff = item(a.id, "drop-off");
    await dropoff.getByLabel("Proof photo").setInputFiles({
      name: "doorstep.png",
      mimeType: "image/png",
      buffer: solidPng(160, 100, [46, 125, 50]),
    });
    await dropoff.getByRole("button", { name: /^Complete task/ }).click();
    await dropoff.getByText("completed", { exact: true }).waitFor();
    const proof = dropoff.getByRole("img", { name: `Proof photo 1 of Delivery #${a.id}, drop-off` });
    await proof.waitFor();
    await until(
      async () =>
        (await proof.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)) === 160,
      "the proof photo loaded",
    );
    assert.match((await proof.getAttribute("src")) ?? "", /^\/ops\/v1\/media\/[\w-]{24}\.png$/);

    // B's pickup fails: a blank reason is refused beside the field, then the reason is kept.
    await page.getByRole("button", { name: `Start task (Delivery #${b.id}, pickup)` }).click();
    const pickupB = item(b.id, "pickup");
    await pickupB.getByRole("button", { name: /^Fail task/ }).click();
    await pickupB.locator(".field-error", { hasText: /^failure_reason / }).waitFor();
    await pickupB.getByLabel("Failure reason").fill("Shop closed");
    await pickupB.getByRole("button", { name: /^Fail task/ }).click();
    await pickupB.getByText("failed", { exact: true }).waitFor();
    await pickupB.getByText("Failure reason: Shop closed").waitFor();
    await checkPage(page, "round page");
    await screenshot(page, "staff-dispatch-round");

    // The board follows: the round started, three of its four tasks done.
    await page.goto(`${bed.pageUrl}/staff/dispatch?date=${a.day}`);
    await until(async () => /started.*4 tasks, 3 done/.test((await roundEntry.textContent()) ?? ""));
    await checkbox(c.id).waitFor(); // C is to assign again
    await screenshot(page, "staff-dispatch-board");
    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test("two dispatchers at once: a delivery assigned meanwhile is refused by name, those before it stay assigned; a demotion meets a 403", async () => {
    const { page } = await newPage(browser, bed);
    const zone = await browserZone(page);
    const held = await newDelivery("DISPATCH-HELD", zone);
    const e = await newDelivery("DISPATCH-E", zone);
    const f = await newDelivery("DISPATCH-F", zone);
    const crew = await newCrew("Race Round");
    const other = await newCrew("Other Round");
    const round = await bed.ops<{ id: number }>("POST", "/rounds", {
      messenger_id: crew.messengerId,
      delivery_ids: [held.id],
    });
    const otherRound = await bed.ops<{ id: number }>("POST", "/rounds", { messenger_id: other.messengerId });
    const dispatcher = await signInWithApp(bed, page, { role: "dispatcher" });
    await page.goto(`${bed.pageUrl}/staff/dispatch?date=${e.day}`);
    const checkbox = (id: number) =>
      toAssignList(page).getByRole("checkbox", { name: new RegExp(`^Delivery #${id},`) });
    await checkbox(e.id).check();
    await checkbox(f.id).check();
    await page.getByLabel("Round").selectOption(String(round.body.id));
    // Meanwhile, another dispatcher puts F on another round.
    assert.equal(
      (await bed.ops("POST", `/rounds/${otherRound.body.id}/deliveries`, { delivery_id: f.id })).status,
      200,
    );
    await page.getByRole("button", { name: "Assign selected" }).click();
    const alert = page.getByRole("alert");
    await alert.getByText(`Delivery #${f.id}: delivery ${f.id} is already in round ${otherRound.body.id}`).waitFor();
    await alert.getByText(`#${e.id} assigned first.`).waitFor();
    // The board shows E assigned at once, and F gone too once read again.
    await until(async () => (await checkbox(e.id).count()) === 0 && (await checkbox(f.id).count()) === 0);
    const tasks = (await bed.ops<{ tasks: Array<{ delivery_id: number }> }>("GET", `/rounds/${round.body.id}`)).body
      .tasks;
    assert.deepEqual([...new Set(tasks.map((t) => t.delivery_id))], [held.id, e.id]);

    // Made read-only while the page is open: the form is still there, delivery-api refuses (403, shown).
    const demoted = await bed.ops("PATCH", `/staff/${dispatcher.id}`, { role: "read_only" });
    assert.equal(demoted.status, 200, JSON.stringify(demoted.body));
    await page.getByLabel("Messenger").selectOption({ label: "Race Round" });
    await page.getByRole("button", { name: "Create round" }).click();
    await page.getByRole("alert").getByText("read_only may not POST /ops/v1/rounds").waitFor();
    await page.context().close();
  });

  test("a read-only person reads the board and a round but is offered no change; delivery-api refuses a forced one", async () => {
    const { page } = await newPage(browser, bed);
    const zone = await browserZone(page);
    const d = await newDelivery("DISPATCH-RO", zone);
    const e = await newDelivery("DISPATCH-RO-2", zone);
    const crew = await newCrew("Read Only Round");
    const round = await bed.ops<{ id: number }>("POST", "/rounds", {
      messenger_id: crew.messengerId,
      vehicle_id: crew.vehicleId,
      delivery_ids: [d.id],
    });
    assert.equal(round.status, 201, JSON.stringify(round.body));
    await signInWithApp(bed, page, { role: "read_only" });
    await page.goto(`${bed.pageUrl}/staff/dispatch?date=${d.day}`);
    await toAssignList(page)
      .getByText(new RegExp(`^Delivery #${e.id}, drop-off,`))
      .waitFor();
    await roundsList(page)
      .getByRole("link", { name: `Round #${round.body.id}`, exact: true })
      .waitFor();
    assert.equal(await page.getByRole("checkbox").count(), 0);
    assert.equal(await page.getByRole("button", { name: "Assign selected" }).count(), 0);
    assert.equal(await page.getByRole("heading", { name: "New round" }).count(), 0);
    await checkPage(page, "dispatch board (read-only)");
    // A day the API refuses: its message beside the field.
    await page.goto(`${bed.pageUrl}/staff/dispatch?date=0000-01-01`);
    await page
      .locator(".field-error", { hasText: "querystring.date must be from 1900-01-01 to 2199-12-31" })
      .first()
      .waitFor();
    // The day typed with the keyboard, its parts in the browser locale's order: opened once whole.
    const [year, month, dayOfMonth] = d.day.split("-") as [string, string, string];
    const parts = (await page.evaluate(
      "new Intl.DateTimeFormat().formatToParts(new Date(2030, 0, 2)).filter((p) => p.type !== 'literal').map((p) => p.type)",
    )) as Array<"year" | "month" | "day">;
    await page.getByLabel("Day").focus();
    await page.keyboard.type(parts.map((part) => ({ year, month, day: dayOfMonth })[part]).join(""));
    await page.waitForURL(new RegExp(`date=${d.day}$`));

    await roundsList(page)
      .getByRole("link", { name: `Round #${round.body.id}`, exact: true })
      .click();
    await page.getByRole("heading", { name: `Round #${round.body.id}`, level: 1 }).waitFor();
    await taskItems(page).first().waitFor();
    assert.equal(
      await page
        .getByRole("button")
        .filter({ hasText: /^(Start|End|Move|Complete|Fail)/ })
        .count(),
      0,
    );
    const forced = await forcedCall(page, "POST", `/ops/v1/rounds/${round.body.id}/deliveries`, { delivery_id: e.id });
    assert.deepEqual(forced, {
      status: 403,
      body: { errors: ["read_only may not POST /ops/v1/rounds/{id}/deliveries"] },
    });
    const started = await forcedCall(page, "POST", `/ops/v1/rounds/${round.body.id}/start`, {});
    assert.equal(started.status, 403);
    assert.equal((await bed.ops<{ status: string }>("GET", `/rounds/${round.body.id}`)).body.status, "planned");
    await page.context().close();
  });
});

/** A raw request through the console as this HTTP browser (its cookies; its CSRF token unless told). */
async function raw(
  http: HttpBrowser,
  method: string,
  path: string,
  options: { type?: string; body?: Buffer; csrf?: boolean } = {},
) {
  const headers: Record<string, string> = {
    cookie: [...http.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
  };
  if (options.type) headers["content-type"] = options.type;
  if (options.csrf !== false && method !== "GET") headers["x-csrf-token"] = http.csrf;
  const response = await fetch(`${bed.url}${path}`, { method, headers, body: options.body });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, type: response.headers.get("content-type") ?? "", bytes };
}

describe("a busy day", () => {
  test("comes in pages: 100 deliveries to assign and 25 rounds, then the rest by Show more", async () => {
    const { page } = await newPage(browser, bed);
    const zone = await browserZone(page);
    // Its own day, three days from now: 26 rounds holding one delivery each, 101 to assign.
    const crew = await newCrew("Busy Day");
    for (let i = 0; i < 26; i++) {
      const held = await newDelivery(`BUSY-ROUND-${i}`, zone, 3);
      const round = await bed.ops("POST", "/rounds", { messenger_id: crew.messengerId, delivery_ids: [held.id] });
      assert.equal(round.status, 201, JSON.stringify(round.body));
    }
    let day = "";
    for (let i = 0; i < 101; i++) day = (await newDelivery(`BUSY-${i}`, zone, 3)).day;
    await signInWithApp(bed, page, { role: "admin" });
    await page.goto(`${bed.pageUrl}/staff/dispatch?date=${day}`);
    await page.getByText("101 deliveries to assign, earliest slot first.").waitFor();
    const boxes = toAssignList(page).getByRole("checkbox");
    const roundLinks = roundsList(page).getByRole("link", { name: /^Round #\d+$/ });
    await until(async () => (await boxes.count()) === 100 && (await roundLinks.count()) === 25, "the first pages");
    await page.getByRole("button", { name: "Show more deliveries" }).click();
    await until(async () => (await boxes.count()) === 101, "the second page of deliveries");
    assert.equal(await page.getByRole("button", { name: "Show more deliveries" }).count(), 0, "the last page");
    await page.getByRole("button", { name: "Show more rounds" }).click();
    await until(async () => (await roundLinks.count()) === 26, "the second page of rounds");
    assert.equal(await page.getByRole("button", { name: "Show more rounds" }).count(), 0, "the last page");
    // The rounds a delivery may be assigned to: every round of the day, the second page's too.
    assert.equal(await page.getByLabel("Round").locator("option").count(), 26);
    await page.context().close();
  });
});

describe("who reaches the dispatch pages and the forwarder, and what it forwards", () => {
  test("a shop user and a signed-out browser get 404 for the pages and the forwarder, an upload included", async () => {
    const { browser: shopHttp } = await signedInShopUser(bed);
    const nobody = new HttpBrowser(bed.url);
    await nobody.open();
    for (const http of [shopHttp, nobody]) {
      for (const path of ["/staff/dispatch", "/staff/dispatch/rounds/1", "/ops/v1/dispatch/rounds?date=2030-06-02"]) {
        assert.equal((await http.call("GET", path)).status, 404, path);
      }
      const upload = await raw(http, "POST", "/ops/v1/tasks/1/pictures", {
        type: "image/png",
        body: solidPng(2, 2, [0, 0, 0]),
      });
      assert.equal(upload.status, 404);
      assert.equal((await raw(http, "GET", "/ops/v1/media/AAAAAAAAAAAAAAAAAAAAAAAA.png")).status, 404);
    }
  });

  test("for a staff session: images on the proof uploads only, within the limit, with the CSRF token; image answers pass", async () => {
    const zone = "UTC";
    const delivery = await newDelivery("DISPATCH-FORWARD", zone);
    const crew = await newCrew("Forwarder Round");
    const round = await bed.ops<{ id: number; tasks: Array<{ task_id: number; kind: string }> }>("POST", "/rounds", {
      messenger_id: crew.messengerId,
      vehicle_id: crew.vehicleId,
      delivery_ids: [delivery.id],
    });
    assert.equal((await bed.ops("POST", `/rounds/${round.body.id}/start`)).status, 200);
    const dropoff = round.body.tasks.find((t) => t.kind === "dropoff")?.task_id as number;
    assert.equal((await bed.ops("POST", `/tasks/${dropoff}/start`)).status, 200);
    const { browser: staff } = await signedInStaff(bed, "dispatcher");
    const png = solidPng(4, 4, [200, 30, 30]);
    const path = `/ops/v1/tasks/${dropoff}/pictures`;

    // Refused by the console before delivery-api: no CSRF token, another image type, an image
    // to another route, one over the limit.
    assert.equal((await raw(staff, "POST", path, { type: "image/png", body: png, csrf: false })).status, 403);
    assert.equal((await raw(staff, "POST", path, { type: "image/gif", body: Buffer.from("GIF89a") })).status, 415);
    const elsewhere = await raw(staff, "POST", `/ops/v1/rounds/${round.body.id}/start`, {
      type: "image/png",
      body: png,
    });
    assert.equal(elsewhere.status, 415);
    assert.match(elsewhere.bytes.toString(), /an image body is taken by a task's pictures and signature only/);
    const huge = Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024)]);
    assert.equal((await raw(staff, "POST", path, { type: "image/png", body: huge })).status, 413);
    // delivery-api's own check of the bytes comes back as it is.
    const fake = await raw(staff, "POST", path, { type: "image/jpeg", body: Buffer.from("not a jpeg") });
    assert.deepEqual([fake.status, JSON.parse(fake.bytes.toString())], [422, { errors: ["body is not a JPEG image"] }]);

    const stored = await raw(staff, "POST", path, { type: "image/png", body: png });
    assert.equal(stored.status, 201, stored.bytes.toString());
    const shown = await staff.call("GET", `/ops/v1/rounds/${round.body.id}`);
    const mediaId = shown.body.tasks.find((t: { task_id: number }) => t.task_id === dropoff).proofs[0]
      .media_id as string;
    const image = await raw(staff, "GET", `/ops/v1/media/${mediaId}`);
    assert.equal(image.status, 200);
    assert.equal(image.type, "image/png");
    assert.deepEqual(image.bytes, png);
  });
});
