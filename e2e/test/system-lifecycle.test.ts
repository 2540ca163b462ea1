import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { testInfra, waitFor } from "@dos/service-kit/testing";
import pg from "pg";
import { SERVICES, serviceEntry } from "../../scripts/system.ts";
import {
  call,
  callRetrying503,
  clientHeaders,
  opsHeaders,
  outboundDelivery,
  type SeededAccount,
  seedDemo,
} from "../src/client.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";

describe("the four services as separate processes", () => {
  let system: SystemUnderTest;
  before(async () => {
    system = await bootSystemUnderTest(
      {
        // A position waits in geo-ingest's batch until the shutdown flushes it.
        GEO_BATCH_MAX_DELAY_MS: "1000",
        GEO_RATE_LIMIT_INTERVAL_MS: "10",
      },
      { logDir: process.env.LIFECYCLE_LOG_DIR },
    );
  });
  let work: InFlightWork | undefined;
  after(async () => {
    await work?.close();
    await system.teardown();
  });

  test("each answers /livez, /readyz and /metrics", async () => {
    for (const service of system.services) {
      assert.equal((await fetch(`${service.url}/livez`)).status, 200, service.spec.name);
      const ready = (await (await fetch(`${service.url}/readyz`)).json()) as {
        status: string;
        checks: Record<string, string>;
      };
      assert.equal(ready.status, "ready", service.spec.name);
      assert.equal(ready.checks.postgres, "ok", service.spec.name);
      assert.equal(ready.checks.nats, "ok", service.spec.name);
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      assert.match(metrics, new RegExp(`process_cpu_user_seconds_total\\{service="${service.spec.name}"\\}`));
    }
  });

  test("SIGTERM twice while each is busy: each finishes its in-flight work and exits 0 within 10 s", async () => {
    work = await startInFlightWork(system);
    const started = Date.now();
    for (const service of system.services) service.child.kill("SIGTERM");
    // A second SIGTERM (a process-group kill, then a supervisor's own) used to end a process by the signal.
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const service of system.services) if (service.child.exitCode === null) service.child.kill("SIGTERM");
    await work.finishRequest();
    const results = await Promise.all(
      system.services.map(async (service) => ({ name: service.spec.name, ...(await service.exited) })),
    );
    const ms = Date.now() - started;
    for (const result of results) {
      assert.equal(result.code, 0, `${result.name} exited ${result.code ?? result.signal}`);
    }
    assert.ok(ms < 10_000, `stopped in ${ms} ms`);
    // delivery-api: the request whose body was still arriving at SIGTERM was answered.
    assert.equal(await work.requestStatus, 422);
    // webhook-dispatcher: the POST in flight at SIGTERM was answered, and recorded as delivered.
    assert.equal(work.webhook.answered, 1);
    const db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    try {
      const attempts = await db.query("select outcome from webhooks.attempts where event_type = 'delivery.created'");
      assert.deepEqual(
        attempts.rows.map((row) => row.outcome),
        ["delivered"],
      );
      // geo-ingest: the position answered 200 and still waiting in its batch at SIGTERM was stored.
      assert.equal(await work.positionStatus, 200);
      const positions = await db.query("select count(*)::int as n from geo.vehicle_positions");
      assert.equal(positions.rows[0].n, work.positionsAccepted + 1);
    } finally {
      await db.end();
    }
  });
});

/**
 * Work each service is doing when SIGTERM comes: an API request whose body has not fully arrived
 * (delivery-api), a webhook POST its endpoint holds for a second (webhook-dispatcher, pricing
 * having quoted the create behind it), a position waiting in a batch (geo-ingest).
 */
type InFlightWork = Awaited<ReturnType<typeof startInFlightWork>>;

async function startInFlightWork(system: SystemUnderTest) {
  const { accounts, vehicles } = seedDemo(system);
  const account = accounts[0] as SeededAccount;
  const api = system.url("delivery-api");
  const webhook = { arrived: 0, answered: 0 };
  let arrived: () => void = () => {};
  const firstArrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const receiver = http.createServer((request, response) => {
    request.resume();
    webhook.arrived++;
    arrived();
    setTimeout(() => response.writeHead(204).end(() => webhook.answered++), 1000);
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const registered = await call(`${api}/api/v2/webhooks`, "POST", clientHeaders(account), {
    url: receiverUrl,
    events: ["delivery.created"],
  });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  const tariff = await callRetrying503(
    `${system.opsUrl}/ops/v1/accounts/${account.account_id}/tariffs`,
    "POST",
    opsHeaders,
    { base_cents: { outbound: 900, inbound: 900, other: 1400 }, per_package_cents: 100 },
  );
  assert.equal(tariff.status, 201, JSON.stringify(tariff.body));
  const created = await callRetrying503(`${api}/api/v2/deliveries`, "POST", clientHeaders(account), {
    ...outboundDelivery(account),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));

  // A position of the demo vehicle in an active round, once geo-ingest knows the round.
  const vehicle = vehicles.find((v) => v.active) as (typeof vehicles)[number];
  const geo = system.url("geo-ingest");
  let positionsAccepted = 0;
  await waitFor(async () => {
    const answer = await call(
      `${geo}/external/vehicles/${vehicle.external_id}/geolocations`,
      "POST",
      {},
      {
        latitude: 48.86,
        longitude: 2.34,
        provider: vehicle.provider,
      },
    );
    if (answer.status === 200) positionsAccepted++;
    return answer.status === 200 || undefined;
  }, 20_000);
  await firstArrival;

  // The request's head and half its body now; the rest only after SIGTERM.
  const body = Buffer.from(JSON.stringify({ packages: "not a list" }));
  const request = http.request(`${api}/api/v2/deliveries`, {
    method: "POST",
    headers: { ...clientHeaders(account), "content-type": "application/json", "content-length": body.length },
  });
  const requestStatus = new Promise<number>((resolve, reject) => {
    request.on("response", (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", reject);
  });
  request.write(body.subarray(0, 10));
  // A position whose batch is still gathering (up to 1 s) when SIGTERM comes.
  const positionStatus = call(
    `${geo}/external/vehicles/${vehicle.external_id}/geolocations`,
    "POST",
    {},
    {
      latitude: 48.87,
      longitude: 2.35,
      provider: vehicle.provider,
    },
  ).then((answer) => answer.status);
  await new Promise((resolve) => setTimeout(resolve, 100));
  return {
    positionStatus,
    webhook,
    requestStatus,
    get positionsAccepted() {
      return positionsAccepted;
    },
    async finishRequest() {
      await new Promise((resolve) => setTimeout(resolve, 300));
      request.end(body.subarray(10));
    },
    close: () => {
      request.destroy();
      receiver.closeAllConnections();
      return new Promise<void>((resolve) => receiver.close(() => resolve()));
    },
  };
}

/**
 * Only a guard against a boot that hangs: these boots end in well under a second, but on a
 * loaded 2-core machine starting Node alone took more than 10 s once, and killed the test.
 */
const BOOT_GUARD_MS = 30_000;

describe("configuration errors", () => {
  for (const spec of SERVICES) {
    test(`${spec.name} with a malformed DATABASE_URL prints one clear line and exits 78`, () => {
      const result = spawnSync(process.execPath, [serviceEntry(spec, "main")], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: "mysql://root:secret@localhost/x",
          NATS_URL: testInfra().natsUrl,
          API_OPS_TOKEN: "an-operator-token-long-enough-0123",
          WEBHOOKS_SECRET_KEY: "a-webhooks-secret-key-long-enough-0123",
          CONSOLE_PUBLIC_URL: "http://localhost:3005",
          CONSOLE_API_URL: "http://127.0.0.1:3000",
          CONSOLE_OPS_URL: "http://127.0.0.1:3004",
          CONSOLE_OPS_TOKEN: "an-operator-token-long-enough-0123",
          CONSOLE_SECRET_KEY: "a-console-secret-key-long-enough-0123",
          CONSOLE_SYSTEM_DELIVERY_API_URL: "http://127.0.0.1:3000",
          CONSOLE_SYSTEM_GEO_INGEST_URL: "http://127.0.0.1:3001",
          CONSOLE_SYSTEM_PRICING_URL: "http://127.0.0.1:3002",
          CONSOLE_SYSTEM_WEBHOOK_DISPATCHER_URL: "http://127.0.0.1:3003",
        },
        encoding: "utf8",
        timeout: BOOT_GUARD_MS,
      });
      assert.equal(result.status, 78);
      assert.equal(result.stdout, "");
      assert.equal(
        result.stderr,
        'configuration error: DATABASE_URL is invalid: must be a postgres:// URL (got "mysql://root:***@localhost/x")\n',
      );
    });
  }

  test("an unreachable database stops the boot with one log line naming DATABASE_URL", () => {
    const pricing = SERVICES.find((spec) => spec.name === "pricing");
    assert.ok(pricing);
    const result = spawnSync(process.execPath, [serviceEntry(pricing, "main")], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
        NATS_URL: testInfra().natsUrl,
      },
      encoding: "utf8",
      timeout: BOOT_GUARD_MS,
    });
    assert.equal(result.status, 1);
    const lines = result.stdout.trim().split("\n");
    assert.equal(lines.length, 1, result.stdout);
    const line = JSON.parse(lines[0] ?? "{}");
    assert.equal(line.level, "fatal");
    assert.match(line.error, /^cannot reach PostgreSQL \(DATABASE_URL\): connect ECONNREFUSED/);
    assert.equal(result.stderr, "");
  });
});
