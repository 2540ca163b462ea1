/**
 * A vehicle's stored positions asked over NATS (what delivery-api's vehicle page shows): newest
 * first, bounded by since / before / limit, one vehicle's only, refusals as services errors.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { natsNames, SERVICE_ERROR_HEADERS, type TrackPosition, VEHICLE_TRACK_MAX_LIMIT } from "@dos/contracts";
import { type Harness, postPosition, startHarness } from "./harness.ts";

const HISTORY = 3000;

/** A reply: positions when answered, errors when refused. */
interface Answer {
  code: string | undefined;
  body: { positions: TrackPosition[]; errors: string[] };
}
const oldest = (answer: Answer) => answer.body.positions.at(-1)?.recorded_at as string;
// Across midnight (UTC), so that the history lies in two daily partitions.

const START = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 1500 * 1000;

describe("vehicle track over NATS", () => {
  let h: Harness;
  let ask: (body: unknown) => Promise<Answer>;

  before(async () => {
    h = await startHarness("geo_vtrack");
    const subject = natsNames(h.namespace).services.geoTrack.subjects.vehicle;
    ask = async (body) => {
      const msg = await h.nats.nc.request(subject, JSON.stringify(body), { timeout: 5000 });
      return { code: msg.headers?.get(SERVICE_ERROR_HEADERS.code) || undefined, body: msg.json() };
    };
    // A long history of two vehicles, a second apart, written as a batch would write it.
    await h.database.pool.query(
      `insert into vehicle_positions
         (vehicle_external_id, recorded_at, received_at, round_id, provider, tracker_id, latitude, longitude)
       select v, to_timestamp(($1::bigint + i * 1000) / 1000.0), now(), 41, 'acme-trackers', null, 48 + i / 100000.0, 2.3
       from generate_series(0, $2::int - 1) as i, unnest(array['VAN-TRACK', 'VAN-OTHER']) as v`,
      [START, HISTORY],
    );
  });
  after(() => h.close());

  test("newest first, at most the limit, only the vehicle asked for", async () => {
    const answer = await ask({ vehicle_external_id: "VAN-TRACK", limit: 5 });
    assert.equal(answer.code, undefined, JSON.stringify(answer.body));
    const times = answer.body.positions.map((p) => Date.parse(p.recorded_at));
    assert.deepEqual(
      times,
      [1, 2, 3, 4, 5].map((k) => START + (HISTORY - k) * 1000),
    );
    assert.deepEqual(Object.keys(answer.body.positions[0] ?? {}).sort(), [
      "latitude",
      "longitude",
      "provider",
      "received_at",
      "recorded_at",
      "round_id",
      "tracker_id",
    ]);
    assert.equal(answer.body.positions[0]?.round_id, 41);
  });

  test("since and before bound the window; before pages further back without gaps", async () => {
    const since = new Date(START + 100 * 1000).toISOString();
    const first = await ask({ vehicle_external_id: "VAN-TRACK", since, limit: VEHICLE_TRACK_MAX_LIMIT });
    assert.equal(first.body.positions.length, VEHICLE_TRACK_MAX_LIMIT);
    const second = await ask({
      vehicle_external_id: "VAN-TRACK",
      since,
      before: oldest(first),
      limit: VEHICLE_TRACK_MAX_LIMIT,
    });
    const third = await ask({
      vehicle_external_id: "VAN-TRACK",
      since,
      before: oldest(second),
      limit: VEHICLE_TRACK_MAX_LIMIT,
    });
    const all = [...first.body.positions, ...second.body.positions, ...third.body.positions].map((p) =>
      Date.parse(p.recorded_at),
    );
    // From the newest down to `since` itself (inclusive): 2,900 positions, each once.
    assert.equal(all.length, HISTORY - 100);
    assert.equal(new Set(all).size, all.length);
    assert.equal(all.at(-1), START + 100 * 1000);
  });

  test("a position posted by a tracker is there at once, and a vehicle with none answers an empty list", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-LIVE", active_round_id: 77 });
    const now = new Date();
    const posted = await postPosition(h, "VAN-LIVE", {
      timestamp: now.toISOString(),
      latitude: 45.75,
      longitude: 4.85,
      provider: "acme-trackers",
      tracker_id: 9,
    });
    assert.equal(posted.statusCode, 200);
    const answer = await ask({ vehicle_external_id: "VAN-LIVE", limit: 10 });
    assert.equal(answer.body.positions.length, 1);
    assert.deepEqual(
      { ...answer.body.positions[0], received_at: undefined },
      {
        latitude: 45.75,
        longitude: 4.85,
        recorded_at: now.toISOString().replace("Z", "+00:00"),
        received_at: undefined,
        round_id: 77,
        provider: "acme-trackers",
        tracker_id: 9,
      },
    );
    assert.deepEqual((await ask({ vehicle_external_id: "NO-SUCH-VAN", limit: 10 })).body, { positions: [] });
  });

  test("a request off the contract is refused with 422 naming the field", async () => {
    const tooMany = await ask({ vehicle_external_id: "VAN-TRACK", limit: VEHICLE_TRACK_MAX_LIMIT + 1 });
    assert.equal(tooMany.code, "422");
    assert.match(tooMany.body.errors[0] ?? "", /limit must be at most 1000/);
    const notADate = await ask({ vehicle_external_id: "VAN-TRACK", since: "2030-02-30T00:00:00Z", limit: 1 });
    assert.equal(notADate.code, "422");
    assert.deepEqual(notADate.body.errors, ["since is not a real date"]);
  });
});
