/**
 * A 200 means committed: geo-ingest runs as its own process (src/main.ts), is killed with
 * SIGKILL in the middle of a load, restarted, and every position it had answered 200 must be
 * in the table.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ensureTopology, fleetKey, natsNames } from "@dos/contracts";
import { connectNats, createDatabase, createLogger, type NatsHandle } from "@dos/service-kit";
import { randomNamespace, type TestDatabase, testInfra, waitFor } from "@dos/service-kit/testing";
import { Kvm } from "@nats-io/kv";
import { SCHEMA } from "../migrations/index.ts";
import { fleetEntry, freePort, migratedDatabase } from "./harness.ts";

const serviceDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const VEHICLES = 200;
const WORKERS = 32;

describe("SIGKILL under load", () => {
  let testDatabase: TestDatabase;
  let nats: NatsHandle;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  const children: ChildProcess[] = [];

  const startService = async () => {
    const child = spawn(process.execPath, ["src/main.ts"], {
      cwd: serviceDir,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    children.push(child);
    await waitFor(
      async () => (await fetch(`${baseUrl}/readyz`).catch(() => null))?.ok,
      20_000,
      "geo-ingest to be ready",
    );
    return child;
  };

  before(async () => {
    testDatabase = await migratedDatabase("geo_crash");
    const namespace = randomNamespace();
    const { natsUrl } = testInfra();
    nats = await connectNats(natsUrl, "geo-ingest-test", createLogger("test", "silent"));
    await ensureTopology(nats.nc, { namespace });
    const kv = await new Kvm(nats.nc).open(natsNames(namespace).buckets.fleet);
    await Promise.all(
      Array.from({ length: VEHICLES }, (_, i) =>
        kv.put(fleetKey(`CRASH-${i}`), JSON.stringify(fleetEntry({ vehicle_external_id: `CRASH-${i}` }))),
      ),
    );
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    env = {
      PATH: process.env.PATH,
      DATABASE_URL: testDatabase.url,
      NATS_URL: natsUrl,
      NATS_NAMESPACE: namespace,
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "warn",
      // Many positions per vehicle per second: the rate limit stays out of this test's way.
      GEO_RATE_LIMIT_INTERVAL_MS: "1",
    };
  });

  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await nats.drain();
    await testDatabase.drop();
  });

  test("every position answered 200 before the kill is stored after the restart", async () => {
    const first = await startService();
    const acknowledged: string[] = [];
    let stop = false;
    let sequence = 0;
    const worker = async () => {
      while (!stop) {
        const n = sequence++;
        const vehicle = `CRASH-${n % VEHICLES}`;
        const timestamp = new Date(Date.now() - 1000 + (n % 1000)).toISOString();
        const body = JSON.stringify({
          timestamp,
          latitude: 48,
          longitude: 2,
          provider: "acme-trackers",
        });
        try {
          const response = await fetch(`${baseUrl}/external/vehicles/${vehicle}/geolocations`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
          });
          await response.arrayBuffer();
          if (response.status === 200) acknowledged.push(`${vehicle}|${timestamp}`);
        } catch {
          // The process died under this request: no 200, no promise made.
        }
      }
    };
    const workers = Array.from({ length: WORKERS }, worker);
    try {
      await waitFor(async () => acknowledged.length >= 2000, 30_000, "2,000 positions answered 200");
      first.kill("SIGKILL");
      await once(first, "exit");
    } finally {
      // Also when the wait fails: workers left looping would keep the test process alive forever.
      stop = true;
      await Promise.all(workers);
    }

    const second = await startService();
    const database = createDatabase({ url: testDatabase.url, schema: SCHEMA, applicationName: "geo-ingest-test" });
    try {
      const { rows } = await database.pool.query<{ key: string }>(
        `select vehicle_external_id || '|' || to_char(recorded_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as key
         from vehicle_positions`,
      );
      const stored = new Set(rows.map((row) => row.key));
      const lost = acknowledged.filter((key) => !stored.has(key));
      assert.ok(acknowledged.length >= 2000);
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged positions lost`);
      // The restarted process serves and stores again.
      const response = await fetch(`${baseUrl}/external/vehicles/CRASH-0/geolocations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ latitude: 1, longitude: 1, provider: "acme-trackers", tracker_id: 999_999_999 }),
      });
      assert.equal(response.status, 200);
    } finally {
      await database.close();
      second.kill("SIGTERM");
      await once(second, "exit");
    }
  });
});
