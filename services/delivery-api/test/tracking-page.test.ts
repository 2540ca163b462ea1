/**
 * Positions, ETA and the public tracking page: tracker positions arrive on VEHICLE_POSITIONS
 * (as geo-ingest publishes them) and replace the phone's; the ETA follows; the page, opened in a
 * real headless Chromium, shows the status and moves the messenger's marker over server-sent
 * events, with nothing loaded from anywhere but delivery-api.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { formatTimestamp, natsNames, type VehiclePosition } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { launchChromium } from "@dos/service-kit/testing-browser";
import { jetstream } from "@nats-io/jetstream";
import type { Browser } from "playwright-core";
import { storeEta } from "../src/dispatch/positions/positions.repository.ts";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, dispatch, getDelivery, opsClient } from "./dispatch-fixtures.ts";
import type { OpsClient } from "./ops-client.ts";

let bed: DeliveriesTestbed;
let ops: OpsClient;
let browser: Browser;
let baseUrl: string;
before(async () => {
  bed = await startDeliveriesTestbed({ API_ETA_MIN_INTERVAL_MS: "0", API_TRACKING_PUSH_MS: "100" });
  await bed.api.app.listen({ port: 0, host: "127.0.0.1" });
  baseUrl = `http://127.0.0.1:${(bed.api.app.server.address() as AddressInfo).port}`;
  await bed.api.start();
  ops = opsClient(bed.api);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await bed.close();
});

async function publishTracker(externalId: string, roundId: number, latitude: number, longitude: number) {
  const now = formatTimestamp(new Date());
  const position: VehiclePosition = {
    vehicle_external_id: externalId,
    round_id: roundId,
    latitude,
    longitude,
    recorded_at: now,
    received_at: now,
    provider: "acme",
    tracker_id: null,
  };
  const names = natsNames(bed.api.config.NATS_NAMESPACE);
  await jetstream(bed.api.nats.nc).publish(names.subjects.vehiclePosition(externalId), JSON.stringify(position));
}

describe("tracking", () => {
  test("ETA from positions, and the page's marker moves live in Chromium", async () => {
    // Zone 75001's centroid in the fixtures is 48.86, 2.34: the dropoff is there.
    const created = await createDelivery(bed.api, bed.account);
    const d = await dispatch(ops, created.id, "VAN-TRACK");
    await ops.post(`/rounds/${d.roundId}/start`);
    await ops.post(`/tasks/${d.pickupTask}/start`);
    await ops.post(`/tasks/${d.pickupTask}/complete`, {});
    const started = await ops.post(`/tasks/${d.dropoffTask}/start`);
    assert.equal(started.body.dropoff.eta, null, "no position yet, no ETA");

    // The phone says 5.5 km away; then a tracker position 1.1 km away replaces it.
    const phone = await ops.post(`/messengers/${d.messengerId}/positions`, { latitude: 48.91, longitude: 2.34 });
    assert.deepEqual(phone.body, { stored: true, round_ids: [d.roundId] });
    const far = (await getDelivery(bed.api, bed.account, created.id)).dropoff.eta;
    assert.ok(far);
    // 5.56 km at 20 km/h = 16.7 min, plus 5 min stop.
    const farMinutes = (Date.parse(far) - Date.now()) / 60_000;
    assert.ok(farMinutes > 21 && farMinutes < 22.5, `ETA ${farMinutes} min`);

    const page = await browser.newPage();
    const external: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(baseUrl)) external.push(request.url());
    });
    await page.goto(`${baseUrl}${new URL(started.body.dropoff.tracking_url).pathname}`);
    await page.waitForSelector('#status[data-status="picked_up"]');
    const marker = page.locator("#messenger-marker");
    await waitFor(async () => (await marker.getAttribute("data-lat")) === "48.91", 5000, "phone position on the map");
    const before = { cx: await marker.getAttribute("cx"), cy: await marker.getAttribute("cy") };

    await publishTracker("VAN-TRACK", d.roundId, 48.87, 2.34);
    await waitFor(async () => (await marker.getAttribute("data-lat")) === "48.87", 5000, "tracker position on the map");
    const moved = { cx: await marker.getAttribute("cx"), cy: await marker.getAttribute("cy") };
    assert.notDeepEqual(moved, before, "the marker moved");
    assert.ok(Number(moved.cy) > Number(before.cy), "southward, towards the destination");

    const near = (await getDelivery(bed.api, bed.account, created.id)).dropoff.eta;
    assert.ok(Date.parse(near) < Date.parse(far), "the ETA came closer");
    await waitFor(async () => (await page.locator("#eta").getAttribute("data-eta")) === near, 5000, "ETA on the page");

    // A stale phone position no longer wins over the fresh tracker.
    await ops.post(`/messengers/${d.messengerId}/positions`, { latitude: 48.95, longitude: 2.34 });
    const state = await bed.api.app.inject({
      method: "GET",
      url: `${new URL(started.body.dropoff.tracking_url).pathname}/state`,
    });
    assert.equal(state.json().messenger.latitude, 48.87);
    // The state holds nothing of the recipient but the destination point.
    assert.deepEqual(Object.keys(state.json()).sort(), [
      "completed_at",
      "destination",
      "eta",
      "failure_reason",
      "messenger",
      "proof",
      "sender",
      "status",
      "task",
    ]);

    // Delivered: the page shows it and the proof; the marker is gone.
    await ops.post(`/tasks/${d.dropoffTask}/complete`, { accepted_by: "Jeanne Martin" });
    await page.waitForSelector('#status[data-status="delivered"]');
    assert.equal(await page.locator("#accepted-by").textContent(), "Received by Jeanne Martin");
    assert.equal(await marker.getAttribute("visibility"), "hidden");
    assert.deepEqual(external, [], "no third-party request");
    await page.close();
  });

  test("an ETA is stored at most once per interval per task", async () => {
    const created = await createDelivery(bed.api, bed.account);
    const task = (
      await bed.api.db
        .selectFrom("tasks")
        .select("id")
        .where("delivery_id", "=", created.id)
        .where("kind", "=", "dropoff")
        .executeTakeFirstOrThrow()
    ).id;
    await ops.post("/rounds", {
      messenger_id: (await ops.post("/messengers", { name: "M" })).body.id,
      delivery_ids: [created.id],
    });
    assert.equal(await storeEta(bed.api.db, task, new Date(), 30_000), true);
    assert.equal(await storeEta(bed.api.db, task, new Date(), 30_000), false);
  });

  test("unknown and not yet started links are 404: a page for the recipient's browser, JSON for the state", async () => {
    const unknown = await bed.api.app.inject({ method: "GET", url: "/track/AAAAAAAAAAAAAAAAAAAAAA" });
    assert.equal(unknown.statusCode, 404);
    assert.match(String(unknown.headers["content-type"]), /^text\/html/);
    assert.match(String(unknown.headers["content-security-policy"]), /default-src 'none'/);
    assert.match(unknown.body, /<h1>This tracking link is not valid<\/h1>/);
    assert.match(unknown.body, /once the messenger starts your delivery/);
    const state = await bed.api.app.inject({ method: "GET", url: "/track/AAAAAAAAAAAAAAAAAAAAAA/state" });
    assert.equal(state.statusCode, 404);
    assert.deepEqual(state.json(), { errors: ["tracking link not found"] });
  });

  test("an expired link is 410: the page says so, the state says so in JSON", async () => {
    const created = await createDelivery(bed.api, bed.account);
    const d = await dispatch(ops, created.id, "VAN-EXPIRED");
    await ops.post(`/rounds/${d.roundId}/start`);
    await ops.post(`/tasks/${d.pickupTask}/start`);
    // Completed long before any retention of tracking links.
    const { tracking_token: token } = await bed.api.db
      .updateTable("tasks")
      .set({ completed_at: new Date(Date.now() - 400 * 24 * 3600 * 1000) })
      .where("id", "=", d.pickupTask)
      .returning("tracking_token")
      .executeTakeFirstOrThrow();
    const page = await bed.api.app.inject({ method: "GET", url: `/track/${token}` });
    assert.equal(page.statusCode, 410);
    assert.match(String(page.headers["content-type"]), /^text\/html/);
    assert.match(page.body, /<h1>This tracking link has expired<\/h1>/);
    const state = await bed.api.app.inject({ method: "GET", url: `/track/${token}/state` });
    assert.deepEqual([state.statusCode, state.json()], [410, { errors: ["tracking link has expired"] }]);
  });
});
