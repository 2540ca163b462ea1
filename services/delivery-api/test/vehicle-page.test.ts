/**
 * The vehicle page's reads and its token rotation, with a real geo-ingest beside delivery-api on
 * the bus: a tracker's positions posted to geo-ingest become the vehicle's last position (through
 * VEHICLE_POSITIONS), its recent positions (asked of geo-ingest over NATS), its live-map entry, and
 * messages a subscriber of `geo.positions.<vehicle>` receives; a rotated token is shown once and
 * geo-ingest takes only it from then on.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fleetKey, natsNames, VehiclePosition } from "@dos/contracts";
import { postPosition, startTestGeoIngest, type TestGeoIngest } from "@dos/geo-ingest/testing";
import { waitFor } from "@dos/service-kit/testing";
import type { Subscription } from "@nats-io/nats-core";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, opsClient } from "./dispatch-fixtures.ts";
import type { OpsClient } from "./ops-client.ts";
import { createTestStaff } from "./staff-fixtures.ts";

const VAN = "VAN-PAGE-1";
let bed: DeliveriesTestbed;
let geo: TestGeoIngest;
let ops: OpsClient;
let vehicleId: number;
let roundId: number;
let token: string;
/** Positions posted, oldest first: a second apart, ending a few seconds ago. */
const times: string[] = [];

before(async () => {
  bed = await startDeliveriesTestbed();
  await bed.api.start();
  // The limit per vehicle is geo-ingest's own test; here positions follow each other quickly.
  geo = await startTestGeoIngest(
    "geo_vpage",
    { GEO_RATE_LIMIT_INTERVAL_MS: "20", GEO_PUBLISH_INTERVAL_MS: "100" },
    {
      namespace: bed.api.config.NATS_NAMESPACE,
    },
  );
  ops = opsClient(bed.api);
  const delivery = await createDelivery(bed.api, bed.account);
  const messenger = await ops.post("/messengers", { name: "Paula Pilote" });
  const vehicle = await ops.post("/vehicles", { external_id: VAN, provider: "acme-trackers", label: "Van page" });
  vehicleId = vehicle.body.id;
  const round = await ops.post("/rounds", {
    messenger_id: messenger.body.id,
    vehicle_id: vehicleId,
    delivery_ids: [delivery.id],
  });
  roundId = round.body.id;
  assert.equal((await ops.post(`/rounds/${roundId}/start`)).status, 200);
  await waitFor(async () => geo.built.fleet.get(VAN)?.roundId === roundId, 5000, "geo-ingest knows the active round");
});
after(async () => {
  await geo?.close();
  await bed?.close();
});

/** Posts a position as the tracker does (with its token once it has one). */
async function track(timestamp: string, latitude: number, headers: Record<string, string> = {}) {
  let answer = await postPosition(
    geo,
    VAN,
    { timestamp, latitude, longitude: 2.35, provider: "acme-trackers" },
    headers,
  );
  // 20 ms between a vehicle's requests: a 429 here says only that the previous one was just now.
  for (let i = 0; answer.statusCode === 429 && i < 50; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    answer = await postPosition(geo, VAN, { timestamp, latitude, longitude: 2.35, provider: "acme-trackers" }, headers);
  }
  return answer;
}

describe("the vehicle page", () => {
  test("a rotated provider token is shown once, not stored or audited, and geo-ingest takes only it", async () => {
    const dispatcher = await createTestStaff(bed.api, "dispatcher", "Diane Dispatch");
    const rotated = await dispatcher.ops.post(`/vehicles/${vehicleId}/provider_token`);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.equal(rotated.headers["cache-control"], "no-store");
    token = rotated.body.provider_token;
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(rotated.body.has_provider_token, true);
    assert.equal(rotated.body.id, vehicleId);
    const shown = await ops.get(`/vehicles/${vehicleId}`);
    assert.equal(JSON.stringify(shown.body).includes(token), false, "the token is never shown again");
    const stored = await bed.api.db.selectFrom("vehicles").selectAll().where("id", "=", vehicleId).executeTakeFirst();
    assert.equal(JSON.stringify(stored).includes(token), false);
    const audit = await bed.api.db
      .selectFrom("audit_log")
      .select(["actor_name", "status_code", "after"])
      .where("route", "=", "/ops/v1/vehicles/{id}/provider_token")
      .execute();
    assert.deepEqual(
      audit.map((e) => [e.actor_name, e.status_code]),
      [["Diane Dispatch", 200]],
    );
    assert.equal(JSON.stringify(audit).includes(token), false, "the audit log keeps no token");

    // geo-ingest learns the new hash from FLEET: without the token a position is refused.
    await waitFor(async () => geo.built.fleet.get(VAN)?.tokenSha256 !== null, 5000, "the token reached geo-ingest");
    const now = Date.now();
    const refused = await track(new Date(now - 10_000).toISOString(), 48.8);
    assert.equal(refused.statusCode, 401);
    // A second rotation makes the first token useless.
    const again = await ops.post(`/vehicles/${vehicleId}/provider_token`);
    assert.notEqual(again.body.provider_token, token);
    await waitFor(
      async () =>
        (await track(new Date(now - 9_000).toISOString(), 48.8, { "x-provider-token": token })).statusCode === 401,
      5000,
      "the first token is refused",
    );
    token = again.body.provider_token;
  });

  test("positions posted to geo-ingest: last position and its round, recent positions newest first, in pages", async () => {
    const base = Date.now() - 8_000;
    for (let i = 0; i < 5; i++) {
      const at = new Date(base + i * 1000).toISOString();
      const answer = await track(at, 48.85 + i / 1000, { "x-provider-token": token });
      assert.equal(answer.statusCode, 200, answer.body);
      times.push(at.replace("Z", "+00:00"));
    }
    const newest = times.at(-1) as string;
    const page = await waitFor(
      async () => {
        const answer = await ops.get(`/vehicles/${vehicleId}`);
        return answer.body.last_position?.recorded_at === newest ? answer : undefined;
      },
      10_000,
      "the last position on the vehicle page",
    );
    assert.deepEqual(
      { ...page?.body.last_position, received_at: undefined },
      { latitude: 48.854, longitude: 2.35, recorded_at: newest, received_at: undefined, round_id: roundId },
    );
    assert.deepEqual(page?.body.current_round, {
      id: roundId,
      started_at: page?.body.current_round.started_at,
      messenger: { id: page?.body.current_round.messenger.id, name: "Paula Pilote" },
    });
    assert.equal(page?.body.external_id, VAN);
    assert.equal(page?.body.provider, "acme-trackers");

    const first = await ops.get(`/vehicles/${vehicleId}/positions?limit=2`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      first.body.positions.map((p: { recorded_at: string }) => p.recorded_at),
      [times[4], times[3]],
    );
    assert.equal(first.body.positions[0].round_id, roundId);
    assert.equal(first.body.next_before, times[3]);
    const rest = await ops.get(
      `/vehicles/${vehicleId}/positions?limit=2&before=${encodeURIComponent(first.body.next_before)}`,
    );
    assert.deepEqual(
      rest.body.positions.map((p: { recorded_at: string }) => p.recorded_at),
      [times[2], times[1]],
    );
    // An unencoded "+" of the offset arrives as a space: taken back, not refused.
    const since = await ops.get(`/vehicles/${vehicleId}/positions?since=${times[3]}`);
    assert.equal(since.status, 200, JSON.stringify(since.body));
    assert.deepEqual(
      since.body.positions.map((p: { recorded_at: string }) => p.recorded_at),
      [times[4], times[3]],
    );
    assert.equal(since.body.next_before, null);
  });

  test("the live map has the vehicle at its tracker's position, and a subscriber of its subject receives its moves", async () => {
    const live = await ops.get("/fleet/live");
    assert.equal(live.status, 200, JSON.stringify(live.body));
    const entry = live.body.vehicles.find((v: { vehicle_id: number }) => v.vehicle_id === vehicleId);
    assert.equal(entry.round_id, roundId);
    assert.equal(entry.external_id, VAN);
    assert.deepEqual(entry.messenger.name, "Paula Pilote");
    assert.deepEqual(entry.position, {
      latitude: 48.854,
      longitude: 2.35,
      recorded_at: times.at(-1),
      source: "tracker",
    });
    assert.equal(entry.state, "on_time");

    // What the console subscribes to for pushes: the vehicle's subject, a VehiclePosition each move.
    const subject = natsNames(bed.api.config.NATS_NAMESPACE).subjects.vehiclePosition(VAN);
    assert.equal(subject, `${bed.api.config.NATS_NAMESPACE}.geo.positions.${fleetKey(VAN)}`);
    const sub: Subscription = bed.api.nats.nc.subscribe(subject, { max: 1 });
    const received = (async () => {
      for await (const msg of sub) return msg.json<VehiclePosition>();
    })();
    const at = new Date().toISOString();
    assert.equal((await track(at, 48.9, { "x-provider-token": token })).statusCode, 200);
    const message = await received;
    assert.deepEqual(Object.keys(message ?? {}).sort(), Object.keys(VehiclePosition.properties).sort());
    assert.deepEqual(
      { id: message?.vehicle_external_id, round: message?.round_id, lat: message?.latitude, at: message?.recorded_at },
      { id: VAN, round: roundId, lat: 48.9, at: at.replace("Z", "+00:00") },
    );
  });

  test("bad parameters are 422s naming them, an unknown vehicle a 404, and a read-only person reads but cannot rotate", async () => {
    const cases: Array<[string, string]> = [
      ["limit=0", "querystring.limit must be at least 1"],
      ["limit=1001", "querystring.limit must be at most 1000"],
      ["limit=99999999999999999999999", "querystring.limit must be at most 1000"],
      ["since=yesterday", "querystring.since must be an ISO 8601 timestamp"],
      ["since=2030-02-30T00:00:00Z", "querystring.since is not a real date"],
      [`before=${"9".repeat(40)}`, "querystring.before must be at most 35 characters"],
      ["vehicle=2", "querystring.vehicle is not a known field"],
    ];
    for (const [query, message] of cases) {
      const answer = await ops.get(`/vehicles/${vehicleId}/positions?${query}`);
      assert.equal(answer.status, 422, `${query}: ${JSON.stringify(answer.body)}`);
      assert.ok(
        answer.body.errors.some((e: string) => e.startsWith(message)),
        `${query}: ${JSON.stringify(answer.body.errors)} should name ${message}`,
      );
    }
    assert.deepEqual((await ops.get("/vehicles/999999999/positions")).body, {
      errors: ["vehicle 999999999 not found"],
    });
    assert.equal((await ops.post("/vehicles/999999999/provider_token")).status, 404);

    const viewer = await createTestStaff(bed.api, "read_only");
    assert.equal((await viewer.ops.get(`/vehicles/${vehicleId}/positions`)).status, 200);
    assert.equal((await viewer.ops.get("/fleet/live")).status, 200);
    const refused = await viewer.ops.post(`/vehicles/${vehicleId}/provider_token`);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body.errors, ["read_only may not POST /ops/v1/vehicles/{id}/provider_token"]);
  });

  test("with geo-ingest gone, recent positions answer 503 with Retry-After; the rest of the page still answers", async () => {
    await geo.close();
    const answer = await ops.get(`/vehicles/${vehicleId}/positions`);
    assert.equal(answer.status, 503, JSON.stringify(answer.body));
    assert.equal(answer.headers["retry-after"], "5");
    assert.deepEqual(answer.body.errors, [
      "recent positions are unavailable (geo-ingest does not answer); retry later",
    ]);
    assert.equal((await ops.get(`/vehicles/${vehicleId}`)).status, 200);
  });
});
