/**
 * The live map's event stream over HTTP (GET /api/staff/live), on the whole system: the fleet
 * first, as delivery-api shows it to the person, then a position posted to geo-ingest arriving
 * within 2 s; rounds that start and end picked up by the next snapshot; nothing for a shop user
 * or a signed-out browser; the caps per person and in all; a browser that stops reading costing
 * the console no more than the latest state; the stream ended at sign-out, and at SIGTERM, after
 * which the console exits 0.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../../../e2e/src/client.ts";
import { positionPublisher, seedLiveFleet } from "../../../e2e/src/live-fleet.ts";
import { GEO_OPS_TOKEN, operator } from "../../../e2e/src/operator.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { Browser } from "./http-browser.ts";
import { type LiveEvent, openLiveStream } from "./live-stream-client.ts";
import { signedInShopUser, signedInStaff } from "./staff-session.ts";

/** Short, so that a test sees the fleet read again within seconds; the default is 20. */
const SNAPSHOT_SECONDS = 5;
const PER_PERSON = 2;
const TOTAL = 3;
const IDLE_TIMEOUT_MS = 12_000;

let bed: ConsoleBed;
let account: SeededAccount;
before(async () => {
  bed = await startConsoleBed({
    CONSOLE_LIVE_SNAPSHOT_SECONDS: String(SNAPSHOT_SECONDS),
    CONSOLE_LIVE_STREAMS_PER_PERSON: String(PER_PERSON),
    CONSOLE_LIVE_STREAMS_TOTAL: String(TOTAL),
    CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: "100000",
    // A connection on which nothing moves is closed after this long (the kit's); heartbeats every third of it.
    HTTP_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
    // geo-ingest's operator endpoint: the test reads a round's track to know a position is stored.
    GEO_OPS_TOKEN,
  });
  [account] = seedAccounts(bed.system) as [SeededAccount];
});
after(async () => bed?.close());

/** One of the console's own gauges or counters, from its /metrics. */
async function gauge(name: string): Promise<number> {
  const text = await (await fetch(`${bed.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in the console's metrics`);
  return Number(line.split(" ").at(-1));
}

const isSnapshot = (event: LiveEvent) => event.name === "snapshot";

async function newRound(reference: string) {
  const created = await call(
    `${bed.system.url("delivery-api")}/api/v2/deliveries`,
    "POST",
    clientHeaders(account),
    outboundDelivery(account, reference),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const fleet = operator(bed.system.opsUrl, bed.system.url("geo-ingest"));
  return { fleet, round: await fleet.startRound([(created.body as { id: number }).id]) };
}

describe("a staff session's live map", () => {
  test("the fleet first, then a position posted to geo-ingest within 2 s; rounds that start and end follow", async () => {
    const { browser } = await signedInStaff(bed, "read_only");
    const { fleet, round } = await newRound("live-1");
    // geo-ingest knows the round once a position of it is stored.
    await fleet.storedPosition(round, 48.85, 2.35, new Date(Date.now() - 2000));
    // …and delivery-api, which the snapshot is read from, once it took it from the bus.
    await waitFor(async () => {
      const live = await bed.ops<{ vehicles: Array<{ external_id: string; position: unknown }> }>("GET", "/fleet/live");
      return live.body.vehicles.find((v) => v.external_id === round.vehicle.externalId)?.position ? true : undefined;
    }, 20_000);

    const stream = await openLiveStream(browser);
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers["content-type"]), /^text\/event-stream/);
    assert.equal(stream.headers["cache-control"], "no-store");
    const snapshot = await stream.next(isSnapshot);
    assert.equal(snapshot.data.no_position_after_ms, 120_000);
    const vehicle = snapshot.data.vehicles.find(
      (v: { external_id: string }) => v.external_id === round.vehicle.externalId,
    );
    assert.ok(vehicle, JSON.stringify(snapshot.data).slice(0, 500));
    assert.equal(vehicle.round_id, round.id);
    assert.match(vehicle.messenger, /^Courier /);
    assert.equal(vehicle.late, false);
    assert.deepEqual([vehicle.position?.latitude, vehicle.position?.longitude], [48.85, 2.35]);

    const from = stream.events.length;
    const posted = Date.now();
    assert.equal(await fleet.position(round.vehicle, 48.8601, 2.3601, new Date()), 200);
    const moved = await stream.next(
      (e) => e.name === "positions" && e.data.positions.some((p: number[]) => p[0] === vehicle.vehicle_id),
      10_000,
      from,
    );
    const entry = moved.data.positions.find((p: number[]) => p[0] === vehicle.vehicle_id);
    assert.deepEqual(entry.slice(0, 3), [vehicle.vehicle_id, 48.8601, 2.3601]);
    const lag = moved.at - posted;
    console.log(`position posted to geo-ingest → on the stream: ${lag} ms`);
    assert.ok(lag < 2000, `the position arrived ${lag} ms after it was posted`);

    // A round that starts joins the map, one that ends leaves it, at the next reading of the fleet.
    const second = await newRound("live-2");
    await fleet.ops("POST", `/rounds/${round.id}/end`);
    const since = stream.events.length;
    const next = await stream.next(isSnapshot, SNAPSHOT_SECONDS * 1000 + 10_000, since);
    const ids = next.data.vehicles.map((v: { external_id: string }) => v.external_id);
    assert.ok(ids.includes(second.round.vehicle.externalId), "the new round's vehicle is on the map");
    assert.ok(!ids.includes(round.vehicle.externalId), "the ended round's vehicle has left it");
    // A quiet fleet: the same snapshot is not sent again, and a heartbeat keeps the stream open.
    const quietFrom = stream.events.length;
    await waitFor(async () => (stream.comments > 0 ? true : undefined), IDLE_TIMEOUT_MS);
    assert.deepEqual(
      stream.events.slice(quietFrom).map((e) => e.name),
      [],
    );
    stream.close();
  });

  test("a shop user and a signed-out browser get the 404 of a route that does not exist, and of the page", async () => {
    const { browser: shop } = await signedInShopUser(bed);
    for (const browser of [shop, new Browser(bed.url)]) {
      const stream = await openLiveStream(browser);
      assert.equal(stream.status, 404);
      assert.deepEqual(stream.body, { errors: ["route GET /api/staff/live not found"] });
      // The page's URL too: the app's not-found page.
      assert.equal((await browser.call("GET", "/staff/live")).status, 404);
    }
  });

  test("streams are capped per person and in all: 429 in the error shape, a slot freed when a stream closes", async () => {
    const { browser: first } = await signedInStaff(bed, "dispatcher");
    const { browser: second } = await signedInStaff(bed, "read_only");
    const open = [await openLiveStream(first), await openLiveStream(first)];
    assert.deepEqual(
      open.map((s) => s.status),
      [200, 200],
    );
    const overPerson = await openLiveStream(first);
    assert.equal(overPerson.status, 429);
    assert.deepEqual(overPerson.body, {
      errors: [`a staff person may have ${PER_PERSON} live maps open at once: close one`],
    });
    assert.ok(Number(overPerson.headers["retry-after"]) > 0);
    open.push(await openLiveStream(second));
    assert.equal(open[2]?.status, 200);
    const overTotal = await openLiveStream(second);
    assert.equal(overTotal.status, 429);
    assert.deepEqual(overTotal.body, { errors: [`the console has ${TOTAL} live maps open already: retry later`] });

    open[0]?.close();
    await waitFor(async () => ((await gauge("console_live_streams")) === TOTAL - 1 ? true : undefined), 10_000);
    const again = await openLiveStream(second);
    assert.equal(again.status, 200, "a closed stream's slot is free again");
    for (const stream of [...open, again]) stream.close();
    await waitFor(async () => ((await gauge("console_live_streams")) === 0 ? true : undefined), 10_000);
  });

  test("signing out ends the stream at once, and the stream is not offered again", async () => {
    const { browser } = await signedInStaff(bed, "read_only");
    const stream = await openLiveStream(browser);
    await stream.next(isSnapshot);
    const signedOut = Date.now();
    assert.equal((await browser.call("DELETE", "/api/staff/session")).status, 204);
    const ended = await stream.next((e) => e.name === "ended", 5000);
    assert.deepEqual(ended.data, { reason: "signed out", reconnect: false });
    assert.ok(ended.at - signedOut < 2000, `ended ${ended.at - signedOut} ms after the sign-out`);
    await waitFor(async () => (stream.ended ? true : undefined), 5000);
    assert.equal((await openLiveStream(browser)).status, 404);
  });

  test("a browser that stops reading costs the console the latest state only, gets it when it reads again, or is closed", async () => {
    // Enough vehicles that the snapshots alone fill the kernel's buffers within seconds.
    const vehicles = await seedLiveFleet(bed.system, 10_000, "SLOW");
    const moving = vehicles.slice(0, 500);
    const { browser } = await signedInStaff(bed, "read_only");
    const reader = await openLiveStream(browser);
    const snapshotBytes = (await reader.next(isSnapshot, 20_000)) && reader.bytes;
    reader.close();

    // Two tabs that stop reading: one reads again later, the other never does.
    const stalled = await openLiveStream(browser);
    stalled.pause();
    const gone = await openLiveStream(browser);
    gone.pause();
    const publisher = await positionPublisher(bed.system);
    let maxBuffered = 0;
    let maxPending = 0;
    let rounds = 0;
    const started = Date.now();
    const supersededBefore = await gauge("console_live_positions_superseded_total");
    let superseded = 0;
    // Once a second, as geo-ingest publishes, until the console has skipped two rounds' positions:
    // the sockets stop draining once the kernel's buffers hold a few snapshots (about 12 s here),
    // and may drain a little now and then, so the test counts what was skipped, not seconds.
    while (Date.now() - started < 60_000 && superseded < 2 * moving.length) {
      rounds++;
      for (const vehicle of moving) publisher.publish(vehicle, 48 + rounds / 1000, 2, new Date());
      await publisher.flush();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      maxBuffered = Math.max(maxBuffered, await gauge("console_live_stream_buffered_bytes"));
      maxPending = Math.max(maxPending, await gauge("console_live_stream_pending_positions"));
      superseded = (await gauge("console_live_positions_superseded_total")) - supersededBefore;
    }
    console.log(
      `a stalled stream: snapshot ${(snapshotBytes / 1e6).toFixed(2)} MB, at most ${(maxBuffered / 1e6).toFixed(2)} MB ` +
        `held by the console's two sockets, ${maxPending} positions waiting and ${superseded} skipped, over ${rounds} s`,
    );
    assert.ok(superseded >= 2 * moving.length, `${superseded} positions skipped: the stalled sockets kept draining`);
    // The gauges sum the two streams.
    assert.ok(maxPending <= 2 * moving.length, `${maxPending} positions waiting for ${moving.length} vehicles moving`);
    // What a socket holds beyond the kernel's buffers is one write at most: a snapshot, or a positions event.
    assert.ok(maxBuffered <= 2 * (snapshotBytes + 64 * 1024), `${maxBuffered} bytes held for ${snapshotBytes}`);

    // Reading again: the latest position of each vehicle arrives, not every one that was skipped.
    const from = stalled.events.length;
    stalled.resume();
    const last = moving[0] as (typeof moving)[number];
    const latitude = 48 + rounds / 1000;
    await stalled.next(
      (e) =>
        (e.name === "positions" &&
          e.data.positions.some((p: number[]) => p[0] === last.vehicleId && p[1] === latitude)) ||
        (e.name === "snapshot" &&
          e.data.vehicles.some(
            (v: { vehicle_id: number; position: { latitude: number } | null }) =>
              v.vehicle_id === last.vehicleId && v.position?.latitude === latitude,
          )),
      30_000,
      from,
    );
    stalled.close();
    await publisher.close();
    // The one that never reads again: nothing moves on its connection, which the console closes.
    await waitFor(
      async () => ((await gauge("console_live_streams")) === 0 ? true : undefined),
      IDLE_TIMEOUT_MS + 20_000,
    );
    gone.close();
  });

  // Last: the console stops here.
  test("at SIGTERM the console ends its open streams and exits 0, well within its shutdown time", async () => {
    const { browser } = await signedInStaff(bed, "read_only");
    const stream = await openLiveStream(browser);
    await stream.next(isSnapshot, 20_000);
    const consoleService = bed.system.services.find((s) => s.spec.name === "console");
    assert.ok(consoleService);
    const signalled = Date.now();
    consoleService.child.kill("SIGTERM");
    const ended = await stream.next((e) => e.name === "ended", 5000);
    assert.deepEqual(ended.data, { reason: "the console is restarting", reconnect: true });
    assert.deepEqual(await consoleService.exited, { code: 0, signal: null });
    assert.ok(Date.now() - signalled < 5000, `exited ${Date.now() - signalled} ms after SIGTERM`);
    assert.ok(stream.ended);
  });
});
