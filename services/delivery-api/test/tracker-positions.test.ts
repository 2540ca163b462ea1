/**
 * A fleet's tracker positions: geo-ingest publishes one per vehicle in an active round every
 * second, thousands a second for a fleet of thousands. One by one (a query to check the round,
 * a transaction to store it, three queries for the ETA) delivery-api took in 6–120 a second on
 * the fleet soak's machine, so with 5,000 trackers a round's tracker position was refreshed every
 * minute or two and a third of the rounds had none after 3 minutes (npm run soak -- --profile
 * fleet). A batch now costs the same three queries whatever its size, plus the ETAs due.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { formatTimestamp, natsNames, type VehiclePosition } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";
import { createPositionsService, type TrackerPosition } from "../src/dispatch/positions/positions.service.ts";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, dispatch, opsClient } from "./dispatch-fixtures.ts";
import type { OpsClient } from "./ops-client.ts";

/** Counts the statements a Kysely instance sends (transactions' BEGIN and COMMIT aside). */
class QueryCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

let bed: DeliveriesTestbed;
let ops: OpsClient;
before(async () => {
  bed = await startDeliveriesTestbed();
  await bed.api.start();
  ops = opsClient(bed.api);
});
after(async () => {
  await bed?.close();
});

/** A vehicle of its own in a round of its own, started unless `planned`. */
async function vehicleInRound(externalId: string, planned = false) {
  const messenger = await ops.post("/messengers", { name: `Courier ${externalId}` });
  const vehicle = await ops.post("/vehicles", { external_id: externalId, provider: "acme" });
  const round = await ops.post("/rounds", { messenger_id: messenger.body.id, vehicle_id: vehicle.body.id });
  if (!planned) assert.equal((await ops.post(`/rounds/${round.body.id}/start`)).status, 200);
  return { externalId, roundId: round.body.id as number };
}

async function trackerPositions(roundIds: number[]) {
  const rows = await bed.api.db
    .selectFrom("round_positions")
    .select(["round_id", "latitude", "recorded_at"])
    .where("round_id", "in", roundIds)
    .where("source", "=", "tracker")
    .execute();
  return new Map(rows.map((r) => [Number(r.round_id), { latitude: r.latitude, recordedAt: r.recorded_at.getTime() }]));
}

const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000);

describe("tracker positions in batches", () => {
  test("a batch of 300 positions costs three queries and keeps each active round's newest", async () => {
    const active = [];
    for (let i = 0; i < 100; i++) active.push(await vehicleInRound(`FLEET-A${i}`));
    const planned = await vehicleInRound("FLEET-PLANNED", true);
    const other = await vehicleInRound("FLEET-OTHER");

    const batch: TrackerPosition[] = [];
    for (const [i, v] of active.entries()) {
      // The newer first: the newest is kept, not the last in the batch.
      batch.push({
        roundId: v.roundId,
        vehicleExternalId: v.externalId,
        latitude: 48.8 + i / 1000,
        longitude: 2.3,
        recordedAt: at(1),
      });
      batch.push({
        roundId: v.roundId,
        vehicleExternalId: v.externalId,
        latitude: 47,
        longitude: 2.3,
        recordedAt: at(5),
      });
    }
    // A round not started, and a position naming a round that is not its vehicle's.
    batch.push({
      roundId: planned.roundId,
      vehicleExternalId: planned.externalId,
      latitude: 48,
      longitude: 2,
      recordedAt: at(1),
    });
    batch.push({
      roundId: other.roundId,
      vehicleExternalId: "FLEET-A0",
      latitude: 48,
      longitude: 2,
      recordedAt: at(1),
    });
    while (batch.length < 300) batch.push({ ...(batch[batch.length % 200] as TrackerPosition), recordedAt: at(9) });

    const counter = new QueryCounter();
    const positions = createPositionsService(bed.api.db.withPlugin(counter), bed.api.config);
    await positions.recordTrackerPositions(batch);
    assert.equal(counter.count, 3, "active rounds, the upsert, the ETAs due");

    const stored = await trackerPositions([...active.map((v) => v.roundId), planned.roundId, other.roundId]);
    assert.equal(stored.size, 100, "one position per active round, none for the others");
    for (const [i, v] of active.entries()) assert.equal(stored.get(v.roundId)?.latitude, 48.8 + i / 1000);

    // Older positions arriving late change nothing.
    await positions.recordTrackerPositions(
      active.map((v) => ({
        roundId: v.roundId,
        vehicleExternalId: v.externalId,
        latitude: 40,
        longitude: 2,
        recordedAt: at(60),
      })),
    );
    assert.deepEqual(await trackerPositions(active.map((v) => v.roundId)), stored);
  });

  test("the ETA of a round with a dropoff under way is refreshed in the batch, then not again within the interval", async () => {
    // Zone 75001's centroid in the fixtures is 48.86, 2.34: the dropoff is there.
    const created = await createDelivery(bed.api, bed.account);
    const d = await dispatch(ops, created.id, "FLEET-ETA");
    await ops.post(`/rounds/${d.roundId}/start`);
    await ops.post(`/tasks/${d.pickupTask}/start`);
    await ops.post(`/tasks/${d.pickupTask}/complete`, {});
    await ops.post(`/tasks/${d.dropoffTask}/start`);
    const eta = async () =>
      (await bed.api.db.selectFrom("tasks").select("eta").where("id", "=", d.dropoffTask).executeTakeFirstOrThrow())
        .eta;
    assert.equal(await eta(), null);

    const counter = new QueryCounter();
    const positions = createPositionsService(bed.api.db.withPlugin(counter), bed.api.config);
    const position = { roundId: d.roundId, vehicleExternalId: "FLEET-ETA", latitude: 48.87, longitude: 2.34 };
    await positions.recordTrackerPositions([{ ...position, recordedAt: at(2) }]);
    const first = await eta();
    assert.ok(first, "the ETA is computed from the tracker position");
    // 1.1 km at 20 km/h = 3.3 min, plus the 5-minute stop.
    const minutes = (first.getTime() - Date.now()) / 60_000;
    assert.ok(minutes > 7.5 && minutes < 8.6, `ETA in ${minutes} min`);

    counter.count = 0;
    await positions.recordTrackerPositions([{ ...position, latitude: 48.9, recordedAt: at(1) }]);
    assert.equal(counter.count, 3, "no ETA due: nothing more than the batch's three queries");
    assert.deepEqual(await eta(), first, "within API_ETA_MIN_INTERVAL_MS the ETA stays");
  });

  test("through the bus: a fleet's positions published at once are all stored and acknowledged", async () => {
    const fleet = [];
    for (let i = 0; i < 200; i++) fleet.push(await vehicleInRound(`FLEET-BUS${i}`));
    const names = natsNames(bed.api.config.NATS_NAMESPACE);
    const js = jetstream(bed.api.nats.nc);
    const recordedAt = formatTimestamp(at(1));
    await Promise.all(
      fleet.map((v, i) => {
        const position: VehiclePosition = {
          vehicle_external_id: v.externalId,
          round_id: v.roundId,
          latitude: 48.8 + i / 10_000,
          longitude: 2.35,
          recorded_at: recordedAt,
          received_at: recordedAt,
          provider: "acme",
          tracker_id: null,
        };
        return js.publish(names.subjects.vehiclePosition(v.externalId), JSON.stringify(position));
      }),
    );
    const roundIds = fleet.map((v) => v.roundId);
    await waitFor(
      async () => (await trackerPositions(roundIds)).size === fleet.length,
      20_000,
      "every position stored",
    );
    const stored = await trackerPositions(roundIds);
    for (const [i, v] of fleet.entries()) {
      assert.equal(stored.get(v.roundId)?.latitude, 48.8 + i / 10_000);
      assert.equal(stored.get(v.roundId)?.recordedAt, Date.parse(recordedAt));
    }
    const jsm = await jetstreamManager(bed.api.nats.nc);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(names.streams.vehiclePositions, names.consumers.deliveryApiPositions);
        return info.num_pending + info.num_ack_pending === 0;
      },
      20_000,
      "every message acknowledged",
    );
  });
});
