/** POST /external/vehicles/{vehicle_id}/geolocations as a tracker provider meets it. */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout } from "node:timers/promises";
import { type Harness, postPosition, startHarness } from "./harness.ts";

const iso = (ms: number) => new Date(ms).toISOString();

describe("geolocation creation", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness("geo_routes");
    await h.putVehicle({ vehicle_external_id: "VAN-1", active_round_id: 501 });
    await h.putVehicle({ vehicle_external_id: "VAN-PARKED", active_round_id: null });
  });
  after(() => h.close());

  test("a position of a vehicle in an active round is stored and answered 200 with an empty body", async () => {
    const recorded = Date.now() - 5000;
    const response = await postPosition(h, "VAN-1", {
      timestamp: iso(recorded).replace("Z", "+00:00"),
      latitude: 48.8566,
      longitude: 2.3522,
      provider: "acme-trackers",
      tracker_id: 42,
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, "");
    const [row, ...others] = await h.positions("VAN-1");
    assert.equal(others.length, 0);
    assert.ok(row);
    assert.equal(row.recorded_at.getTime(), recorded);
    assert.ok(Math.abs(row.received_at.getTime() - Date.now()) < 5000);
    assert.deepEqual(
      { round: row.round_id, provider: row.provider, tracker: row.tracker_id, lat: row.latitude, lon: row.longitude },
      { round: 501, provider: "acme-trackers", tracker: 42, lat: 48.8566, lon: 2.3522 },
    );
  });

  test("a blank, null or missing timestamp stores the time of the call", async () => {
    const base = { latitude: 45.75, longitude: 4.85, provider: "acme-trackers" };
    const bodies = [{ ...base, timestamp: "" }, { ...base, timestamp: null }, base];
    for (const [i, body] of bodies.entries()) {
      const vehicle = `VAN-BLANK-${i}`;
      await h.putVehicle({ vehicle_external_id: vehicle, active_round_id: 502 });
      const started = Date.now();
      const response = await postPosition(h, vehicle, body);
      assert.equal(response.statusCode, 200, response.body);
      const [row] = await h.positions(vehicle);
      assert.ok(row, `${vehicle} stored`);
      assert.ok(row.recorded_at.getTime() >= started && row.recorded_at.getTime() <= Date.now());
      assert.equal(row.recorded_at.getTime(), row.received_at.getTime());
    }
  });

  test("an unknown vehicle External ID is answered 404", async () => {
    const response = await postPosition(h, "NO-SUCH-VAN", { latitude: 1, longitude: 1, provider: "acme-trackers" });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(response.json(), { errors: ["vehicle_id is not a known vehicle External ID"] });
  });

  test("bodies that cannot be stored are answered 422 in the error shape", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-422", active_round_id: 503 });
    const now = Date.now();
    const base = { latitude: 48.1, longitude: 2.1, provider: "acme-trackers" };
    const cases: Array<[unknown, string[]]> = [
      [{ ...base, latitude: 90.5 }, ["latitude must be at most 90"]],
      [{ ...base, longitude: -180.01 }, ["longitude must be at least -180"]],
      [{ longitude: 2, provider: "acme-trackers" }, ["latitude is required"]],
      [{ ...base, latitude: "48.1" }, ["latitude must be a number"]],
      [{ ...base, provider: "" }, ["provider must not be blank"]],
      [
        { ...base, timestamp: "yesterday" },
        ["timestamp must be an ISO 8601 timestamp with UTC offset (YYYY-MM-DDThh:mm:ss.sss+hh:mm)"],
      ],
      [{ ...base, timestamp: "2026-02-30T10:00:00+00:00" }, ["timestamp is not a valid date"]],
      [{ ...base, provider: "other-provider" }, ["provider is not the provider of this vehicle"]],
      [{ ...base, tracker_id: 1e20 }, ["tracker_id must be at most 9007199254740991"]],
      [{ ...base, timestamp: iso(now + 10 * 60_000) }, ["timestamp must not be more than 120 seconds in the future"]],
      [{ ...base, timestamp: iso(now - 31 * 86_400_000) }, ["timestamp must not be older than 30 days"]],
    ];
    // One after the other on one vehicle: a refused request never takes the vehicle's slot.
    for (const [body, errors] of cases) {
      const response = await postPosition(h, "VAN-422", body);
      assert.equal(response.statusCode, 422, JSON.stringify(body));
      assert.deepEqual(response.json(), { errors }, JSON.stringify(body));
    }
    assert.deepEqual(await h.positions("VAN-422"), []);
    assert.equal((await postPosition(h, "VAN-422", base)).statusCode, 200);
  });

  test("a timestamp slightly ahead of the server clock is within the tolerance", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-AHEAD", active_round_id: 504 });
    const ahead = Date.now() + 30_000;
    const response = await postPosition(h, "VAN-AHEAD", {
      timestamp: iso(ahead),
      latitude: 1,
      longitude: 1,
      provider: "acme-trackers",
    });
    assert.equal(response.statusCode, 200);
    assert.equal((await h.positions("VAN-AHEAD"))[0]?.recorded_at.getTime(), ahead);
  });

  test("a second request for one vehicle within a second is answered 429 with Retry-After", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-429", active_round_id: 505 });
    const body = (offset: number, tracker?: number) => ({
      timestamp: iso(Date.now() - offset),
      latitude: 43.3,
      longitude: 5.4,
      provider: "acme-trackers",
      ...(tracker === undefined ? {} : { tracker_id: tracker }),
    });
    assert.equal((await postPosition(h, "VAN-429", body(3000, 7))).statusCode, 200);
    const refused = await postPosition(h, "VAN-429", body(2000, 7));
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers["retry-after"], "1");
    assert.deepEqual(refused.json(), { errors: ["tracker sends more than one request per second; retry later"] });
    // tracker_id is the caller's word: another one, or none, shares the vehicle's budget.
    assert.equal((await postPosition(h, "VAN-429", body(1000, 8))).statusCode, 429);
    assert.equal((await postPosition(h, "VAN-429", body(500))).statusCode, 429);
    assert.equal((await h.positions("VAN-429")).length, 1);
    // A second later the vehicle is served again.
    await setTimeout(1000);
    assert.equal((await postPosition(h, "VAN-429", body(0, 8))).statusCode, 200);
  });

  test("a vehicle without an active round is answered 200 and its position is not stored", async () => {
    const response = await postPosition(h, "VAN-PARKED", { latitude: 1, longitude: 2, provider: "acme-trackers" });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, "");
    assert.deepEqual(await h.positions("VAN-PARKED"), []);
    const metrics = (await h.app.inject({ method: "GET", url: "/metrics" })).body;
    assert.match(metrics, /geo_positions_total\{outcome="inactive",service="geo-ingest"\} 1/);
  });

  test("a position the database refuses fails alone, not the other positions of its batch", async () => {
    // A fleet entry whose round id PostgreSQL cannot hold (the schema only says "integer").
    await h.putVehicle({ vehicle_external_id: "VAN-POISON", active_round_id: 1e20 });
    const good = [1, 2, 3, 4, 5].map((n) => `VAN-GOOD-${n}`);
    for (const vehicle of good) await h.putVehicle({ vehicle_external_id: vehicle, active_round_id: 508 });
    const body = { timestamp: iso(Date.now() - 1000), latitude: 1, longitude: 1, provider: "acme-trackers" };
    const responses = await Promise.all([
      ...good.map((vehicle) => postPosition(h, vehicle, body)),
      postPosition(h, "VAN-POISON", body),
    ]);
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      [200, 200, 200, 200, 200, 422],
    );
    assert.deepEqual(responses[5]?.json(), { errors: ["body cannot be stored"] });
    for (const vehicle of good) assert.equal((await h.positions(vehicle)).length, 1, vehicle);
  });

  test("the vehicle External ID may hold characters NATS keys do not allow", async () => {
    await h.putVehicle({ vehicle_external_id: 'van 9/"été"\\x', active_round_id: 507 });
    const response = await postPosition(h, 'van 9/"été"\\x', { latitude: 1, longitude: 1, provider: "acme-trackers" });
    assert.equal(response.statusCode, 200);
    assert.equal((await h.positions('van 9/"été"\\x')).length, 1);
  });

  test("a round's stored track is served to operators with the bearer token", async () => {
    // Three vehicles of one round (one position each, so the rate limit does not wait).
    const start = Date.now() - 60_000;
    for (let i = 0; i < 3; i++) {
      await h.putVehicle({ vehicle_external_id: `VAN-TRACK-${i}`, active_round_id: 900 });
      const body = {
        timestamp: iso(start + i * 1000),
        latitude: 10 + i,
        longitude: 20 + i,
        provider: "acme-trackers",
        tracker_id: i,
      };
      assert.equal((await postPosition(h, `VAN-TRACK-${i}`, body)).statusCode, 200);
    }
    const url = "/ops/v1/rounds/900/track";
    assert.equal((await h.app.inject({ method: "GET", url })).statusCode, 401);
    const wrong = await h.app.inject({ method: "GET", url, headers: { authorization: "Bearer nope" } });
    assert.deepEqual(wrong.json(), { errors: ["Authorization: Bearer <operator token> is required"] });
    const auth = { authorization: "Bearer ops-token-for-tests-0123456789" };
    const page = await h.app.inject({ method: "GET", url: `${url}?limit=2`, headers: auth });
    assert.equal(page.statusCode, 200);
    const body = page.json();
    assert.equal(body.round_id, 900);
    assert.deepEqual(
      body.positions.map((p: { latitude: number }) => p.latitude),
      [10, 11],
    );
    assert.equal(body.positions[0].recorded_at, new Date(start).toISOString().replace("Z", "+00:00"));
    assert.equal(body.next_after, body.positions[1].recorded_at);
    const rest = await h.app.inject({
      method: "GET",
      url: `${url}?after=${encodeURIComponent(body.next_after)}`,
      headers: auth,
    });
    assert.deepEqual(
      rest.json().positions.map((p: { latitude: number }) => p.latitude),
      [12],
    );
    assert.equal(rest.json().next_after, null);
  });
  test("over a real connection (the hot path, hot-route.ts) the answers are those of the route through Fastify", async () => {
    // inject() reaches Fastify without a server; a socket reaches the server's request listener,
    // where the hot path takes plain requests. Each transport posts for its own vehicle, so that
    // both meet the same state: stored, then rate limited, then refused.
    await h.app.listen({ host: "127.0.0.1", port: 0 });
    const { port } = h.app.server.address() as AddressInfo;
    for (const transport of ["inject", "socket"]) {
      await h.putVehicle({ vehicle_external_id: `VAN-HOT-${transport}`, active_round_id: 601 });
    }
    const base = { latitude: 48.2, longitude: 2.2, provider: "acme-trackers" };
    const bodies: unknown[] = [
      { ...base, timestamp: iso(Date.now() - 2000), tracker_id: 7 },
      { ...base, timestamp: iso(Date.now() - 1000) },
      { ...base, latitude: 91 },
      { ...base, provider: "other-provider" },
      { ...base, timestamp: "2026-02-30T10:00:00.000Z" },
      { ...base, extra: true },
    ];
    const answers = { inject: [] as unknown[], socket: [] as unknown[] };
    for (const body of bodies) {
      const injected = await postPosition(h, "VAN-HOT-inject", body);
      answers.inject.push([injected.statusCode, injected.body, injected.headers["retry-after"]]);
      const sent = await fetch(`http://127.0.0.1:${port}/external/vehicles/VAN-HOT-socket/geolocations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      answers.socket.push([sent.status, await sent.text(), sent.headers.get("retry-after") ?? undefined]);
    }
    assert.deepEqual(answers.socket, answers.inject);
    assert.deepEqual(
      answers.socket.map((answer) => (answer as [number])[0]),
      [200, 429, 422, 422, 422, 422],
    );
    assert.equal((await h.positions("VAN-HOT-socket")).length, 1);
    assert.equal((await h.positions("VAN-HOT-inject")).length, 1);
  });
});
