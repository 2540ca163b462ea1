/**
 * One budget per vehicle (the spec's one request per second per tracker, the tracker being the
 * device linked to the vehicle): what a stranger or a careless client sends cannot use it up,
 * and the caller-chosen tracker_id cannot multiply it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout } from "node:timers/promises";
import { type Harness, postPosition, startHarness } from "./harness.ts";

/** A tracker keeping to the limit: one position a second by its own clock. */
const TRACKER_PERIOD_MS = 1000;

describe("the per-vehicle budget", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness("geo_budget");
    // The first request of a fresh app (connections, compiled code) can take a second: not
    // in the measured tracker's sequence.
    await h.putVehicle({ vehicle_external_id: "VAN-WARM", active_round_id: 700 });
    await postPosition(h, "VAN-WARM", { latitude: 1, longitude: 1, provider: "acme-trackers" });
  });
  after(() => h.close());

  test("a stranger's refused requests never take the real tracker's slot", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-REAL", active_round_id: 701 });
    const base = { latitude: 48.85, longitude: 2.35, provider: "acme-trackers" };
    // No credentials, a body that passes the schema, then fails one of the later checks.
    const attacks = [
      { ...base, provider: "wrong-provider" },
      { ...base, tracker_id: 2 ** 53 },
      { ...base, tracker_id: 1e20 },
      { ...base, timestamp: new Date(Date.now() + 3_600_000).toISOString() },
      { ...base, latitude: 91 },
    ];
    const strangerStatuses = new Map<number, number>();
    let flooding = true;
    // Far more than the 20 requests per second that made the real tracker get 429 on 10 of 10.
    const flood = (async () => {
      for (let n = 0; flooding; n++) {
        const response = await postPosition(h, "VAN-REAL", attacks[n % attacks.length]);
        strangerStatuses.set(response.statusCode, (strangerStatuses.get(response.statusCode) ?? 0) + 1);
        await setTimeout(5);
      }
    })();

    const trackerStatuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const sentAt = Date.now();
      const response = await postPosition(h, "VAN-REAL", { ...base, latitude: 48 + i / 100 });
      trackerStatuses.push(response.statusCode);
      await setTimeout(Math.max(0, TRACKER_PERIOD_MS - (Date.now() - sentAt)));
    }
    flooding = false;
    await flood;

    assert.deepEqual(trackerStatuses, [200, 200, 200, 200, 200]);
    assert.deepEqual([...strangerStatuses.keys()], [422], "the stranger only ever got 422");
    assert.ok((strangerStatuses.get(422) ?? 0) >= 100, `${strangerStatuses.get(422)} stranger requests`);
    assert.equal((await h.positions("VAN-REAL")).length, 5);
  });

  test("a wrong provider token never takes the slot either", async () => {
    const { createHash } = await import("node:crypto");
    const token = "the-real-trackers-token";
    const hash = createHash("sha256").update(token).digest("hex");
    await h.putVehicle({ vehicle_external_id: "VAN-KEYED", active_round_id: 702, provider_token_sha256: hash });
    const body = { latitude: 1, longitude: 1, provider: "acme-trackers" };
    const guesses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postPosition(h, "VAN-KEYED", body, { "x-provider-token": `guess-${i}` })),
    );
    assert.deepEqual(new Set(guesses.map((r) => r.statusCode)), new Set([401]));
    const real = await postPosition(h, "VAN-KEYED", body, { "x-provider-token": token });
    assert.equal(real.statusCode, 200, real.body);
  });

  test("varying tracker_id does not multiply the vehicle's budget", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-MANY", active_round_id: 703 });
    const statuses: number[] = [];
    const started = Date.now();
    let tracker = 0;
    // 2.5 s of bursts, each request from a new tracker_id, none with a timestamp.
    while (Date.now() - started < 2500) {
      const burst = await Promise.all(
        Array.from({ length: 20 }, () =>
          postPosition(h, "VAN-MANY", {
            latitude: 45,
            longitude: 4 + tracker / 1000,
            provider: "acme-trackers",
            tracker_id: tracker++,
          }),
        ),
      );
      statuses.push(...burst.map((r) => r.statusCode));
      await setTimeout(50);
    }
    const elapsedS = (Date.now() - started) / 1000;
    const ok = statuses.filter((s) => s === 200).length;
    assert.ok(statuses.length >= 200, `${statuses.length} requests sent`);
    assert.deepEqual(new Set(statuses), new Set([200, 429]));
    // One per second (each may come half a second early): 3 or 4 in about 2.5 s, not hundreds.
    const most = 1 + Math.floor(elapsedS + 0.5);
    assert.ok(ok >= 2 && ok <= most, `${ok} answered 200 in ${elapsedS.toFixed(2)} s`);
    // And every one of them is stored.
    assert.equal((await h.positions("VAN-MANY")).length, ok);
  });
});
