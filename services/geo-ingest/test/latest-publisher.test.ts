/**
 * The latest-position publisher's pace, against the machine's NATS: each vehicle at most once per
 * interval, and a fleet whose positions come spread over the interval published spread over it,
 * not in one burst per interval.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout } from "node:timers/promises";
import { natsNames } from "@dos/contracts";
import { connectNats, createLogger, type NatsHandle } from "@dos/service-kit";
import { deleteNamespace, observeCalls, randomNamespace, testInfra, waitFor } from "@dos/service-kit/testing";
import type { VehicleState } from "../src/fleet/fleet.cache.ts";
import { createLatestPublisher, TICKS_PER_INTERVAL } from "../src/positions/latest-publisher.ts";
import type { PositionRow } from "../src/positions/positions.table.ts";

const INTERVAL_MS = 1000;
const namespace = randomNamespace();
let nats: NatsHandle;
before(async () => {
  nats = await connectNats(testInfra().natsUrl, "geo-publisher-test", createLogger("test", "silent"));
});
after(async () => {
  await deleteNamespace(nats.nc, namespace);
  await nats.drain();
});

const vehicleState = (externalId: string): VehicleState => ({
  externalId,
  provider: "acme",
  roundId: 1,
  tokenSha256: null,
  latest: null,
  latestMarked: false,
  publishedMs: Number.NEGATIVE_INFINITY,
});

const row = (vehicleExternalId: string, recordedMs: number): PositionRow => ({
  vehicleExternalId,
  recordedMs,
  receivedMs: recordedMs,
  serverStamped: false,
  roundId: 1,
  provider: "acme",
  trackerId: null,
  latitude: 48.8,
  longitude: 2.3,
});

test("each vehicle at most once per interval, and vehicles moving at different moments published at different moments", async () => {
  const fleet = new Map(["EARLY", "LATE"].map((id) => [id, vehicleState(id)]));
  // When the publisher hands each message to NATS (the pace under test, free of delivery jitter),
  // and what a subscriber then receives.
  const published: Array<{ vehicle: string; at: number }> = [];
  const received: string[] = [];
  const vehicleOf = (data: string) => (JSON.parse(data) as { vehicle_external_id: string }).vehicle_external_id;
  const recording = observeCalls(nats.nc, "publish", (_subject, data) => {
    published.push({ vehicle: vehicleOf(data as string), at: performance.now() });
  });
  const subscription = nats.nc.subscribe(natsNames(namespace).subjects.vehiclePositionsAll);
  void (async () => {
    for await (const message of subscription) received.push(vehicleOf(message.string()));
  })();
  await nats.nc.flush();
  const publisher = createLatestPublisher({
    nc: recording,
    namespace,
    intervalMs: INTERVAL_MS,
    logger: createLogger("test", "silent"),
    vehicle: (id) => fleet.get(id),
    onTick() {},
  });
  publisher.start();
  try {
    // EARLY moves at once and then every 100 ms; LATE moves 500 ms later, then every 100 ms too.
    const started = performance.now();
    let lateStarted: number | undefined;
    while (performance.now() - started < 3000) {
      const now = Date.now();
      publisher.offer([row("EARLY", now)]);
      if (performance.now() - started >= 500) {
        lateStarted ??= performance.now();
        publisher.offer([row("LATE", now)]);
      }
      await setTimeout(100);
    }
    await waitFor(async () => (received.filter((v) => v === "LATE").length >= 3 ? true : undefined), 3000);
    await waitFor(
      async () => (received.length === published.length ? true : undefined),
      3000,
      "every message received",
    );
    const times = (vehicle: string) => published.filter((p) => p.vehicle === vehicle).map((p) => p.at);
    for (const vehicle of ["EARLY", "LATE"]) {
      const at = times(vehicle);
      for (let i = 1; i < at.length; i++) {
        const gap = (at[i] as number) - (at[i - 1] as number);
        assert.ok(gap >= INTERVAL_MS - 5, `${vehicle}: two messages ${gap.toFixed(0)} ms apart`);
        assert.ok(
          gap <= INTERVAL_MS + 2 * (INTERVAL_MS / TICKS_PER_INTERVAL) + 50,
          `${vehicle}: ${gap.toFixed(0)} ms apart`,
        );
      }
    }
    // LATE's first message follows its first move within a tick or two, not at EARLY's next second.
    const firstLate = times("LATE")[0] as number;
    assert.ok(
      firstLate - (lateStarted as number) <= 2 * (INTERVAL_MS / TICKS_PER_INTERVAL) + 50,
      `LATE's first message ${(firstLate - (lateStarted as number)).toFixed(0)} ms after its first move`,
    );
  } finally {
    await publisher.stop();
    subscription.unsubscribe();
  }
});
