/**
 * Two positions of one vehicle at one timestamp. A position answered 200 is stored: an identical
 * repeat is answered 200 (it is stored, once); a different place at a timestamp the tracker gave
 * is refused (422 naming timestamp); a server stamp (no timestamp in the body) that meets
 * another position moves on by a microsecond and is stored.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout } from "node:timers/promises";
import { createLogger, createMetrics } from "@dos/service-kit";
import { createGeoMetrics } from "../src/metrics.ts";
import { createPositionWriter, TimestampTaken } from "../src/positions/position-writer.ts";
import type { PositionRow } from "../src/positions/positions.table.ts";
import { type Harness, postPosition, startHarness } from "./harness.ts";

const iso = (ms: number) => new Date(ms).toISOString();

describe("positions of one vehicle at one timestamp", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness("geo_same_time");
  });
  after(() => h.close());

  test("an identical repeat is answered 200 and stored once", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-REPEAT", active_round_id: 801 });
    const body = { timestamp: iso(Date.now() - 5000), latitude: 50.63, longitude: 3.06, provider: "acme-trackers" };
    assert.equal((await postPosition(h, "VAN-REPEAT", { ...body, tracker_id: 1 })).statusCode, 200);
    await setTimeout(1000);
    // The tracker re-sends it (its first answer was lost), even under another tracker_id.
    const repeat = await postPosition(h, "VAN-REPEAT", { ...body, tracker_id: 2 });
    assert.equal(repeat.statusCode, 200, repeat.body);
    const rows = await h.positions("VAN-REPEAT");
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.tracker_id, 1);
    const metrics = (await h.app.inject({ method: "GET", url: "/metrics" })).body;
    assert.match(metrics, /geo_positions_duplicate_total\{service="geo-ingest"\} 1/);
  });

  test("a different place at a stored timestamp is 422 naming timestamp, and the slot is given back", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-CLASH", active_round_id: 802 });
    const recorded = Date.now() - 5000;
    const body = { timestamp: iso(recorded), latitude: 50.63, longitude: 3.06, provider: "acme-trackers" };
    assert.equal((await postPosition(h, "VAN-CLASH", body)).statusCode, 200);
    await setTimeout(1000);
    const clash = await postPosition(h, "VAN-CLASH", { ...body, latitude: 50.64 });
    assert.equal(clash.statusCode, 422);
    assert.deepEqual(clash.json(), { errors: ["timestamp already holds a different position of this vehicle"] });
    // Refused, so it took no slot: the tracker's next position, at once, is stored.
    const next = await postPosition(h, "VAN-CLASH", { ...body, timestamp: iso(recorded + 1000) });
    assert.equal(next.statusCode, 200, next.body);
    const rows = await h.positions("VAN-CLASH");
    assert.deepEqual(
      rows.map((row) => [row.recorded_at.getTime(), row.latitude]),
      [
        [recorded, 50.63],
        [recorded + 1000, 50.63],
      ],
    );
  });

  test("server stamps of replicas that share no limiter: N answers of 200 are N stored rows", async () => {
    // An ingress that does not route by vehicle: two replicas, each allowing the vehicle its
    // own second, take positions without timestamps in the same milliseconds.
    await h.putVehicle({ vehicle_external_id: "VAN-SPLIT", active_round_id: 803 });
    const replicas = [h, ...(await Promise.all(Array.from({ length: 5 }, () => h.replica())))];
    try {
      const responses = await Promise.all(
        replicas.map((replica, i) =>
          postPosition(replica, "VAN-SPLIT", { latitude: 10 + i, longitude: 20, provider: "acme-trackers" }),
        ),
      );
      assert.deepEqual(
        responses.map((r) => r.statusCode),
        replicas.map(() => 200),
      );
      const rows = await h.positions("VAN-SPLIT");
      assert.deepEqual(rows.map((row) => row.latitude).sort(), [10, 11, 12, 13, 14, 15]);
    } finally {
      await Promise.all(replicas.slice(1).map((replica) => replica.close()));
    }
  });

  describe("in one batch (the writer)", () => {
    const row = (overrides: Partial<PositionRow>): PositionRow => ({
      vehicleExternalId: "VAN-BATCH",
      recordedMs: Date.parse("2026-11-26T05:00:00.000Z"),
      receivedMs: Date.now(),
      serverStamped: false,
      roundId: 804,
      provider: "acme-trackers",
      trackerId: null,
      latitude: 1,
      longitude: 1,
      ...overrides,
    });
    const writer = () =>
      createPositionWriter(
        h.database.pool,
        { maxRows: 100, maxDelayMs: 0, concurrency: 1, queueLimit: 100 },
        {
          logger: createLogger("geo-ingest-test", "silent"),
          metrics: createGeoMetrics(createMetrics("geo-ingest-test")),
          onCommitted: () => {},
        },
      );

    test("server stamps that collide are moved apart by a microsecond and all stored", async () => {
      const stamp = Date.now();
      const rows = [1, 2, 3].map((latitude) =>
        row({ vehicleExternalId: "VAN-STAMP", recordedMs: stamp, receivedMs: stamp, serverStamped: true, latitude }),
      );
      const w = writer();
      await Promise.all(rows.map((r) => w.write(r)));
      const { rows: stored } = await h.database.pool.query<{ latitude: number; micros: string }>(
        `select latitude, (extract(epoch from recorded_at) * 1000000)::bigint::text as micros
         from vehicle_positions where vehicle_external_id = 'VAN-STAMP' order by recorded_at`,
      );
      const base = BigInt(stamp) * 1000n;
      assert.deepEqual(
        stored.map((s) => [s.latitude, BigInt(s.micros) - base]),
        [
          [1, 0n],
          [2, 1n],
          [3, 2n],
        ],
      );
    });

    test("tracker-given timestamps: the same place twice is stored once, another place is refused", async () => {
      const w = writer();
      const results = await Promise.allSettled([
        w.write(row({ latitude: 1 })),
        w.write(row({ latitude: 1, trackerId: 9 })),
        w.write(row({ latitude: 2 })),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ["fulfilled", "fulfilled", "rejected"],
      );
      assert.ok((results[2] as PromiseRejectedResult).reason instanceof TimestampTaken);
      const stored = await h.positions("VAN-BATCH");
      assert.deepEqual(
        stored.map((s) => s.latitude),
        [1],
      );
    });
  });
});
