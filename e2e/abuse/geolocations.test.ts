/**
 * Abuse of the tracker endpoint, replayed against the running system (issue 17, item 4):
 * - a caller with no credentials sends a wrong provider, or a tracker_id beyond 2^53 − 1, to the
 *   bystander's vehicle: it was taking the vehicle's slot, so the real tracker got 429;
 * - a client varies tracker_id to multiply its vehicle's budget (about 2,480 positions a second);
 * - positions without timestamps: 3,000 answers of 200 had stored 356 rows.
 * The bystanders (e2e/src/abuse.ts) keep being served while each attack runs.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type AbuseStage,
  assertBystandersUnharmed,
  bootAbuseStage,
  countStatuses,
  describeBystanders,
  flood,
  underAttack,
} from "../src/abuse.ts";
import { callRetrying503, clientHeaders, outboundDelivery } from "../src/client.ts";
import type { Round } from "../src/operator.ts";

let stage: AbuseStage;
before(async () => {
  stage = await bootAbuseStage();
});
after(async () => stage?.teardown());

const ATTACK_MS = 5000;

const positionsUrl = (vehicle: Round["vehicle"]) =>
  `${stage.geo}/external/vehicles/${encodeURIComponent(vehicle.externalId)}/geolocations`;

async function post(url: string, body: unknown): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Sends `body(n)` from `senders` loops, pausing `pauseMs` after each, for ATTACK_MS; the count of each status. */
async function positionFlood(url: string, senders: number, pauseMs: number, body: (n: number) => unknown) {
  const statuses = await flood({ senders, pauseMs, forMs: ATTACK_MS }, (n) => post(url, body(n)));
  return Object.fromEntries(countStatuses(statuses));
}

test("a stranger's wrong provider and oversized tracker_id never take the real tracker's slot", async () => {
  const { vehicle } = stage.round;
  const base = { latitude: 48.85, longitude: 2.35, provider: vehicle.provider };
  const attacks = [
    { ...base, provider: "not-the-provider" },
    { ...base, tracker_id: 2 ** 53 },
    { ...base, tracker_id: 1e20 },
  ];
  // Two loops, each pausing 20 ms: about 80 requests a second (the issue measured 20 a second).
  const report = await underAttack(stage, () => positionFlood(positionsUrl(vehicle), 2, 20, (n) => attacks[n % 3]));
  console.log(`stranger: ${JSON.stringify(report.result)}; ${describeBystanders(report.bystanders)}`);
  assert.deepEqual(Object.keys(report.result), ["422"]);
  assert.ok((report.result[422] ?? 0) >= 100, `${report.result[422]} stranger requests`);
  assertBystandersUnharmed(report);
});

test("varying tracker_id does not multiply a vehicle's budget, and every 200 without a timestamp is a stored row", async () => {
  // The careless client's own vehicle, in a round of its own.
  const created = await callRetrying503(
    `${stage.api}/api/v2/deliveries`,
    "POST",
    clientHeaders(stage.attacker),
    outboundDelivery(stage.attacker, "tracker-flood"),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const round = await stage.operator.startRound([(created.body as { id: number }).id]);
  // Stored before the flood starts: until geo-ingest has read the round's start from the FLEET
  // bucket, a 200 stores nothing (the vehicle has no active round there yet), and the count of
  // stored rows below would be one short.
  await stage.operator.storedPosition(round, 45.75, 4.85, new Date(Date.now() - 60_000));
  await new Promise((resolve) => setTimeout(resolve, 1100));

  const started = performance.now();
  const report = await underAttack(stage, () =>
    // Eight loops, each pausing 5 ms: a few hundred requests a second, each from a new tracker_id
    // (the test process shares the 2 cores with the system, so a heavier flood measures itself).
    positionFlood(positionsUrl(round.vehicle), 8, 5, (n) => ({
      latitude: 45.75,
      longitude: 4.85 + n / 1_000_000,
      provider: round.vehicle.provider,
      tracker_id: n,
    })),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(`careless client: ${JSON.stringify(report.result)}; ${describeBystanders(report.bystanders)}`);
  const ok = report.result[200] ?? 0;
  assert.deepEqual(Object.keys(report.result).sort(), ["200", "429"]);
  assert.ok((report.result[429] ?? 0) >= 100, `${report.result[429]} requests refused`);
  // One a second (each may come half a second early), not thousands.
  assert.ok(ok >= 3 && ok <= 1 + Math.floor(seconds + 0.5), `${ok} answered 200 in ${seconds.toFixed(1)} s`);
  // Every 200 is a stored position (plus the one sent before the flood).
  const track = await stage.operator.track(round.id);
  assert.equal(track.length, ok + 1);
  assertBystandersUnharmed(report);
});
