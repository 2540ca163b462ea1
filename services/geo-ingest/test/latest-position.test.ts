/** The latest stored position of each active vehicle, published on VEHICLE_POSITIONS. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout } from "node:timers/promises";
import { natsNames } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { type Harness, postPosition, startHarness } from "./harness.ts";

const iso = (ms: number) => new Date(ms).toISOString();

describe("latest position on the bus", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness("geo_bus");
  });
  after(() => h.close());

  test("the latest position of an active vehicle is published on the bus", async () => {
    const names = natsNames(h.namespace);
    await h.putVehicle({ vehicle_external_id: "VAN-BUS", active_round_id: 603 });
    const older = Date.now() - 4000;
    const newer = Date.now() - 2000;
    // The newer position first: the older one, arriving late, must not become "latest".
    const post = (ms: number, tracker: number) =>
      postPosition(h, "VAN-BUS", {
        timestamp: iso(ms),
        latitude: ms === newer ? 2 : 1,
        longitude: 3,
        provider: "acme-trackers",
        tracker_id: tracker,
      });
    assert.equal((await post(newer, 1)).statusCode, 200);
    await setTimeout(1000); // one request per second per vehicle
    assert.equal((await post(older, 2)).statusCode, 200);
    const jsm = await jetstreamManager(h.nats.nc);
    const message = await waitFor(
      async () =>
        (await jsm.streams.getMessage(names.streams.vehiclePositions, {
          last_by_subj: names.subjects.vehiclePosition("VAN-BUS"),
        })) ?? undefined,
      5000,
      "the latest position on VEHICLE_POSITIONS",
    );
    assert.deepEqual(message?.json(), {
      vehicle_external_id: "VAN-BUS",
      round_id: 603,
      latitude: 2,
      longitude: 3,
      recorded_at: iso(newer).replace("Z", "+00:00"),
      received_at: message?.json<{ received_at: string }>().received_at,
      provider: "acme-trackers",
      tracker_id: 1,
    });
  });
});
