/**
 * The positions consumer while the database holds a batch back: what waits is one entry per
 * vehicle, its newest position, whatever the number of messages delivered meanwhile, and every
 * message is acknowledged. One entry per message let the fleet soak's delivery-api (5,000
 * trackers at 1 Hz, a starved database) pile positions up until it ran out of heap.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { formatTimestamp, natsNames, type VehiclePosition } from "@dos/contracts";
import { createLogger } from "@dos/service-kit";
import { waitFor } from "@dos/service-kit/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { createPositionsConsumer } from "../src/dispatch/positions/positions.consumer.ts";
import { createPositionsService, type TrackerPosition } from "../src/dispatch/positions/positions.service.ts";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { opsClient } from "./dispatch-fixtures.ts";

// The app's own consumer is not started (no api.start()): the test's is the only one reading.
let bed: DeliveriesTestbed;
before(async () => {
  bed = await startDeliveriesTestbed();
});
after(async () => {
  await bed?.close();
});

test("positions delivered while a batch is held wait as one entry per vehicle, the newest, and are all acknowledged", async () => {
  const ops = opsClient(bed.api);
  const fleet: Array<{ externalId: string; roundId: number }> = [];
  for (let i = 0; i < 10; i++) {
    const externalId = `HELD-${i}`;
    const messenger = await ops.post("/messengers", { name: `Courier ${i}` });
    const vehicle = await ops.post("/vehicles", { external_id: externalId, provider: "acme" });
    const round = await ops.post("/rounds", { messenger_id: messenger.body.id, vehicle_id: vehicle.body.id });
    await ops.post(`/rounds/${round.body.id}/start`);
    fleet.push({ externalId, roundId: round.body.id });
  }

  // The real service, its first batch held until the test releases it.
  const service = createPositionsService(bed.api.db, bed.api.config);
  const batches: TrackerPosition[][] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const consumer = createPositionsConsumer({
    nc: bed.api.nats.nc,
    namespace: bed.api.config.NATS_NAMESPACE,
    positions: {
      ...service,
      async recordTrackerPositions(batch) {
        batches.push(batch);
        if (batches.length === 1) await held;
        await service.recordTrackerPositions(batch);
      },
    },
    logger: createLogger("positions-consumer-test", "silent"),
  });
  await consumer.ensure();
  consumer.start();
  try {
    const names = natsNames(bed.api.config.NATS_NAMESPACE);
    const js = jetstream(bed.api.nats.nc);
    const jsm = await jetstreamManager(bed.api.nats.nc);
    const consumerInfo = () => jsm.consumers.info(names.streams.vehiclePositions, names.consumers.deliveryApiPositions);
    const delivered = async () => (await consumerInfo()).delivered.consumer_seq;
    const base = Date.now() - 60_000;
    const publish = (v: { externalId: string; roundId: number }, second: number) => {
      const at = formatTimestamp(new Date(base + second * 1000));
      const position: VehiclePosition = {
        vehicle_external_id: v.externalId,
        round_id: v.roundId,
        latitude: 48.8 + second / 100,
        longitude: 2.35,
        recorded_at: at,
        received_at: at,
        provider: "acme",
        tracker_id: null,
      };
      return js.publish(names.subjects.vehiclePosition(v.externalId), JSON.stringify(position));
    };

    await publish(fleet[0] as (typeof fleet)[0], 1);
    await waitFor(async () => batches.length === 1, 10_000, "the first batch, held");
    // Two rounds of every vehicle's positions, each delivered before the next is published.
    for (const v of fleet) await publish(v, 2);
    await waitFor(async () => (await delivered()) === 11, 10_000, "the second positions delivered");
    for (const v of fleet) await publish(v, 3);
    await waitFor(async () => (await delivered()) === 21, 10_000, "the third positions delivered");

    release();
    await waitFor(
      async () => {
        const info = await consumerInfo();
        return info.num_ack_pending + info.num_pending === 0;
      },
      10_000,
      "every message acknowledged",
    );
    assert.deepEqual(
      batches.slice(1).map((batch) => batch.length),
      [10],
      "20 messages delivered while the first batch was held: 10 entries, one batch",
    );
    assert.deepEqual(
      (batches[1] as TrackerPosition[]).map((p) => p.recordedAt.getTime()).sort(),
      fleet.map(() => base + 3000),
      "each vehicle's newest",
    );
    const stored = await bed.api.db
      .selectFrom("round_positions")
      .select(["round_id", "recorded_at"])
      .where(
        "round_id",
        "in",
        fleet.map((v) => v.roundId),
      )
      .execute();
    assert.deepEqual(
      stored.map((r) => r.recorded_at.getTime()),
      fleet.map(() => base + 3000),
    );
  } finally {
    release();
    await consumer.stop();
  }
});
