/**
 * A delivery's whole journey through the four services as processes: a client creates it, the
 * operator dispatches it, a tracker streams positions to geo-ingest (1/s, the real limit), the
 * delivery's ETA follows, the recipient's tracking page in headless Chromium moves its marker,
 * and the completed delivery carries its proof — checked field by field.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Delivery } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { launchChromium } from "@dos/service-kit/testing-browser";
import type { Browser } from "playwright-core";
import {
  call,
  clientHeaders,
  opsHeaders,
  outboundDelivery,
  type SeededAccount,
  type SeededVehicle,
  seedDemo,
} from "../src/client.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";

const GEO_OPS_TOKEN = "e2e-geo-ops-token-0123456789abcdef";
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
/** The smallest valid PNG (1×1) and JPEG. */
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex",
);
const JPEG = Buffer.from("ffd8ffe000104a46494600010100000100010000ffd9", "hex");

let system: SystemUnderTest;
let account: SeededAccount;
let vehicles: SeededVehicle[];
let browser: Browser;
let api: string;
let geo: string;
before(async () => {
  system = await bootSystemUnderTest({
    // A short ETA interval and push period so the journey fits in seconds, not minutes.
    API_ETA_MIN_INTERVAL_MS: "500",
    API_TRACKING_PUSH_MS: "200",
    GEO_OPS_TOKEN,
  });
  const seeded = seedDemo(system);
  account = seeded.accounts[0] as SeededAccount;
  vehicles = seeded.vehicles;
  api = system.url("delivery-api");
  geo = system.url("geo-ingest");
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await system?.teardown();
});

const ops = (method: string, path: string, body?: unknown) =>
  call(`${system.opsUrl}/ops/v1${path}`, method, opsHeaders, body);
const client = (method: string, path: string, body?: unknown) =>
  call(`${api}/api/v2${path}`, method, clientHeaders(account), body);
const getDelivery = async (id: number) => (await client("GET", `/deliveries/${id}`)).body as Delivery;

interface RoundView {
  id: number;
  tasks: Array<{ task_id: number; kind: string }>;
}

/** Posts a position as a tracker provider would; the answer's status. */
async function postPosition(externalId: string, provider: string, latitude: number, longitude: number) {
  const response = await call(
    `${geo}/external/vehicles/${encodeURIComponent(externalId)}/geolocations`,
    "POST",
    {},
    {
      latitude,
      longitude,
      provider,
    },
  );
  return response.status;
}

async function upload(method: string, path: string, type: string, bytes: Buffer) {
  const response = await fetch(`${system.opsUrl}/ops/v1${path}`, {
    method,
    headers: { ...opsHeaders, "content-type": type },
    body: new Uint8Array(bytes),
  });
  return { status: response.status, body: (await response.json()) as { url: string } };
}

/** The positions geo-ingest stored for a round. */
async function track(roundId: number) {
  const response = await call(`${geo}/ops/v1/rounds/${roundId}/track`, "GET", {
    authorization: `Bearer ${GEO_OPS_TOKEN}`,
  });
  return (response.body as { positions: Array<{ latitude: number }> }).positions;
}

describe("dispatch journey", () => {
  test("the demo fleet: DEMO-VAN-1's positions are stored, DEMO-VAN-2's are not", async () => {
    assert.deepEqual(vehicles, [
      { external_id: "DEMO-VAN-1", provider: "demo-tracker", active: true },
      { external_id: "DEMO-VAN-2", provider: "demo-tracker", active: false },
    ]);
    const list = (await ops("GET", "/vehicles")).body as Array<{ external_id: string; active_round_id: number }>;
    const roundId = list.find((v) => v.external_id === "DEMO-VAN-1")?.active_round_id ?? 0;
    // geo-ingest learns the fleet from the bucket the running delivery-api's relay filled.
    await waitFor(async () => (await postPosition("DEMO-VAN-1", "demo-tracker", 48.86, 2.34)) === 200, 5000, "VAN-1");
    assert.deepEqual(
      (await track(roundId)).map((p) => p.latitude),
      [48.86],
    );
    assert.equal(await postPosition("DEMO-VAN-2", "demo-tracker", 48.86, 2.34), 200);
  });

  test("create, dispatch, stream positions, follow the ETA and the map, complete with proof", async () => {
    const started = Date.now();
    const body = outboundDelivery(account, `journey-${randomBytes(3).toString("hex")}`);
    const created = await client("POST", "/deliveries", body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const delivery = created.body as Delivery;

    // The operator: a messenger, a tracked vehicle, a round with the delivery, started.
    const externalId = `E2E-VAN-${randomBytes(3).toString("hex")}`;
    const messenger = (await ops("POST", "/messengers", { name: "Paul Courier", phone: "+33600000000" })).body as {
      id: number;
    };
    const vehicle = await ops("POST", "/vehicles", { external_id: externalId, provider: "e2e-tracker" });
    assert.equal(vehicle.status, 201);
    const round = await ops("POST", "/rounds", {
      messenger_id: messenger.id,
      vehicle_id: (vehicle.body as { id: number }).id,
      delivery_ids: [delivery.id],
    });
    assert.equal(round.status, 201, JSON.stringify(round.body));
    const { id: roundId, tasks } = round.body as RoundView;
    const pickupTask = tasks.find((t) => t.kind === "pickup")?.task_id;
    const dropoffTask = tasks.find((t) => t.kind === "dropoff")?.task_id;
    assert.equal((await getDelivery(delivery.id)).status, "scheduled");
    assert.equal((await ops("POST", `/rounds/${roundId}/start`)).status, 200);
    assert.equal((await ops("POST", `/tasks/${pickupTask}/start`)).status, 200);
    assert.equal((await ops("POST", `/tasks/${pickupTask}/complete`, { notes: "1 parcel" })).status, 200);
    const dropoffStart = await ops("POST", `/tasks/${dropoffTask}/start`);
    assert.equal(dropoffStart.status, 200);
    const startedDropoff = (dropoffStart.body as Delivery).dropoff;
    const trackingUrl = startedDropoff?.tracking_url ?? "";
    assert.ok(trackingUrl.startsWith(`${api}/track/`), trackingUrl);
    assert.equal(startedDropoff?.eta, null, "no position yet, no ETA");

    // The tracker drives south towards the dropoff zone's centroid (75001: 48.8625, 2.3364),
    // one position a second, from 5.5 km away; geo-ingest stores it, delivery-api computes the ETA.
    const path = [48.9125, 48.9025, 48.8925, 48.8825, 48.8725];
    let sent = 0;
    let lastSentAt = 0;
    let lastLatitude = 0;
    /** Sends the next position when a second has passed since the last one (the tracker's limit). */
    const drive = async () => {
      if (Date.now() - lastSentAt < 1000) return;
      const latitude = path[Math.min(sent, path.length - 1)] as number;
      const status = await postPosition(externalId, "e2e-tracker", latitude, 2.3364);
      // 404 only until geo-ingest has read the new vehicle from the FLEET bucket.
      assert.ok(status === 200 || (status === 404 && sent === 0), `geolocation answered ${status}`);
      if (status === 200) {
        sent++;
        lastSentAt = Date.now();
        lastLatitude = latitude;
      }
    };
    let firstEta: string | null = null;
    await waitFor(
      async () => {
        await drive();
        firstEta = (await getDelivery(delivery.id)).dropoff?.eta ?? null;
        return firstEta !== null;
      },
      10_000,
      "a first ETA",
    );
    assert.match(firstEta ?? "", TIMESTAMP);

    // The recipient opens the tracking link: the marker is where the tracker last was.
    const page = await browser.newPage();
    const external: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(api)) external.push(request.url());
    });
    await page.goto(trackingUrl);
    await page.waitForSelector('#status[data-status="picked_up"]');
    const marker = page.locator("#messenger-marker");
    await waitFor(async () => (await marker.getAttribute("data-lat")) !== null, 5000, "the marker on the map");
    const seen = { lat: await marker.getAttribute("data-lat"), cy: await marker.getAttribute("cy") };

    // More positions: the ETA comes closer and the marker moves south on the open page.
    await waitFor(
      async () => {
        await drive();
        const eta = (await getDelivery(delivery.id)).dropoff?.eta ?? "";
        const lat = await marker.getAttribute("data-lat");
        return Date.parse(eta) < Date.parse(firstEta ?? "") && lat !== seen.lat;
      },
      15_000,
      "the ETA to change and the marker to move",
    );
    const moved = { lat: await marker.getAttribute("data-lat"), cy: await marker.getAttribute("cy") };
    assert.ok(Number(moved.lat) < Number(seen.lat), `${moved.lat} south of ${seen.lat}`);
    assert.ok(Number(moved.cy) > Number(seen.cy), "the marker moved down the map");
    // Once the last position sent is on the map, the ETA is the one it gave.
    await waitFor(async () => (await marker.getAttribute("data-lat")) === String(lastLatitude), 5000, "last position");
    const etaBefore = (await getDelivery(delivery.id)).dropoff?.eta ?? "";
    await waitFor(async () => (await page.locator("#eta").getAttribute("data-eta")) === etaBefore, 5000, "ETA shown");
    // Every accepted position is stored for the round, and only while it is active.
    assert.equal((await track(roundId)).length, sent);

    // The messenger hands the parcel over: signature, a picture, completion.
    const signature = await upload("PUT", `/tasks/${dropoffTask}/signature`, "image/png", PNG);
    assert.equal(signature.status, 201);
    const picture = await upload("POST", `/tasks/${dropoffTask}/pictures`, "image/jpeg", JPEG);
    assert.equal(picture.status, 201);
    const completed = await ops("POST", `/tasks/${dropoffTask}/complete`, {
      accepted_by: "Jeanne Martin",
      notes: "Left with the recipient",
    });
    assert.equal(completed.status, 200, JSON.stringify(completed.body));
    await page.waitForSelector('#status[data-status="delivered"]');
    assert.equal(await page.locator("#accepted-by").textContent(), "Received by Jeanne Martin");
    assert.deepEqual(external, [], "the page loads nothing from elsewhere");
    await page.close();

    // The final Delivery, field by field: what changed, and everything else as created.
    const final = await getDelivery(delivery.id);
    const { pickup, dropoff, ...rest } = final;
    const { pickup: createdPickup, dropoff: createdDropoff, ...createdRest } = delivery;
    assert.ok(pickup && dropoff && createdPickup && createdDropoff);
    assert.deepEqual(rest, { ...createdRest, status: "delivered" });
    assert.deepEqual(Object.keys(dropoff).sort(), Object.keys(createdDropoff).sort());
    assert.equal(dropoff.tracking_url, trackingUrl);
    assert.equal(dropoff.eta, etaBefore);
    assert.match(dropoff.completed_at ?? "", TIMESTAMP);
    const completedAt = Date.parse(dropoff.completed_at ?? "");
    assert.ok(completedAt >= started && completedAt <= Date.now(), `completed_at ${dropoff.completed_at}`);
    assert.equal(dropoff.failure_reason, null);
    assert.equal(dropoff.notes, "Left with the recipient");
    assert.deepEqual(dropoff.completion_signature, { url: signature.body.url, accepted_by: "Jeanne Martin" });
    assert.deepEqual(dropoff.completion_pictures, [picture.body.url]);
    assert.equal(dropoff.completion_text, null);
    const unchanged = ["slot_starting_at", "slot_ending_at", "place"] as const;
    for (const key of unchanged) assert.deepEqual(dropoff[key], createdDropoff[key], `dropoff.${key}`);
    assert.match(pickup.tracking_url ?? "", new RegExp(`^${api}/track/`));
    assert.match(pickup.completed_at ?? "", TIMESTAMP);
    assert.equal(pickup.notes, "1 parcel");
    assert.equal(pickup.completion_signature, null);
    assert.deepEqual(pickup.completion_pictures, []);
    for (const key of unchanged) assert.deepEqual(pickup[key], createdPickup[key], `pickup.${key}`);

    // The proof images are served where the Delivery says.
    const image = await fetch(signature.body.url);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get("content-type"), "image/png");
    assert.deepEqual(Buffer.from(await image.arrayBuffer()), PNG);

    // The round ends; the tracker's positions are no longer stored.
    assert.equal((await ops("POST", `/rounds/${roundId}/end`)).status, 200);
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 60_000, `the journey took ${elapsed} ms`);
  });
});
