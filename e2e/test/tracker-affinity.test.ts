/**
 * Why the Gateway hashes /external on the source address (deploy/k8s/base/gateway.yaml,
 * docs/spec-decisions.md "Production deployment"): geo-ingest's per-tracker limit lives in each
 * replica. Two geo-ingest processes on one database and bus: a tracker whose requests all reach
 * one replica — what consistent hashing on its address gives — is held to its limit exactly; the
 * same requests spread over both replicas get one position through per replica.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { type RunningService, SERVICES, startService, waitReady } from "../../scripts/system.ts";
import { call, opsHeaders } from "../src/client.ts";
import { freePortRange } from "../src/ports.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";

// Long enough that two requests sent one after the other always fall inside one interval's
// tolerance (half of it), however loaded the machine.
const INTERVAL_MS = 10_000;
const PROVIDER = "affinity-tracker";

let system: SystemUnderTest;
let second: RunningService;
let replicas: string[];

before(async () => {
  system = await bootSystemUnderTest({ GEO_RATE_LIMIT_INTERVAL_MS: String(INTERVAL_MS) });
  const spec = SERVICES.find((s) => s.name === "geo-ingest");
  assert.ok(spec);
  second = startService(spec, { env: system.env, serviceEnv: system.serviceEnv, basePort: await freePortRange(5) });
  await waitReady(second, 60_000);
  replicas = [system.url("geo-ingest"), second.url];
});
after(async () => {
  if (second && second.child.exitCode === null) {
    second.child.kill("SIGTERM");
    await second.exited;
  }
  await system?.teardown();
});

async function createVehicle(): Promise<string> {
  const externalId = `AFF-${randomBytes(3).toString("hex")}`;
  const created = await call(`${system.opsUrl}/ops/v1/vehicles`, "POST", opsHeaders, {
    external_id: externalId,
    provider: PROVIDER,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return externalId;
}

const post = async (replica: string, vehicle: string) =>
  (
    await call(
      `${replica}/external/vehicles/${vehicle}/geolocations`,
      "POST",
      {},
      {
        latitude: 48.85,
        longitude: 2.35,
        provider: PROVIDER,
      },
    )
  ).status;

test("a tracker's limit is exact on one replica, and per replica without affinity", async () => {
  const pinned = await createVehicle();
  const spread = await createVehicle();
  // The fleet reaches each replica in order: once both know a vehicle created after these two,
  // they know these two, whose budgets no probe has touched.
  const probe = await createVehicle();
  for (const replica of replicas) {
    const deadline = Date.now() + 20_000;
    while ((await post(replica, probe)) === 404) {
      assert.ok(Date.now() < deadline, `${replica} never learnt the fleet`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  // Source-address affinity: both requests reach the same replica.
  const onOne = [await post(replicas[0] as string, pinned), await post(replicas[0] as string, pinned)];
  assert.deepEqual(onOne, [200, 429], "one position per interval, the second refused");

  // No affinity: each replica has a budget of its own for the tracker.
  const onTwo = [await post(replicas[0] as string, spread), await post(replicas[1] as string, spread)];
  assert.deepEqual(onTwo, [200, 200], "both accepted: the limit is per replica");
});
