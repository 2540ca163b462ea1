/**
 * Hostile input over every public endpoint of the running system, property-based (fast-check):
 * random and adversarial JSON, wrong types, huge and deeply nested bodies, invalid UTF-8, wrong
 * content types, header abuse, another account's ids — on the client API (deliveries and
 * webhooks), the geolocation interface, the operator APIs with and without their token, and the
 * tracking page. Zero 5xx, every error `{"errors": [...]}` (a page may answer an HTML 404), and
 * the database exactly as before: nothing a refused request sent was written.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import fc from "fast-check";
import pg from "pg";
import { call, clientHeaders, opsHeaders, outboundDelivery, type SeededAccount, seedDemo } from "../src/client.ts";
import { assertWellAnswered, fingerprint, type RawRequest, send, sendRawHead } from "../src/hostile.ts";
import { hostileBodies, hostileId, hostileQuery } from "../src/hostile-arbitraries.ts";
import { worstCaseBodies, writeRoutesFromOpenApi } from "../src/hostile-sizes.ts";
import { GEO_OPS_TOKEN } from "../src/operator.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

let system: SystemUnderTest;
let mine: SeededAccount;
let other: SeededAccount;
let api: string;
let geo: string;
const ids = { myDelivery: 0, otherDelivery: 0, myWebhook: "", otherWebhook: "" };
let before_: Record<string, string>;

before(async () => {
  system = await bootSystemUnderTest({ GEO_OPS_TOKEN });
  [mine, other] = seedDemo(system).accounts as [SeededAccount, SeededAccount];
  api = system.url("delivery-api");
  geo = system.url("geo-ingest");
  const create = async (account: SeededAccount) =>
    (
      (await call(`${api}/api/v2/deliveries`, "POST", clientHeaders(account), outboundDelivery(account))).body as {
        id: number;
      }
    ).id;
  ids.myDelivery = await create(mine);
  ids.otherDelivery = await create(other);
  const hook = async (account: SeededAccount) => {
    const created = await call(`${api}/api/v2/webhooks`, "POST", clientHeaders(account), {
      url: "http://127.0.0.1:9/hooks",
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return (created.body as { id: string }).id;
  };
  ids.myWebhook = await hook(mine);
  ids.otherWebhook = await hook(other);
  // Everything the setup caused has settled before the database is fingerprinted: every event is
  // published and taken in by webhook-dispatcher, and each webhook tried once (the endpoints refuse
  // connections, so a first failure queues its webhook and marks the endpoint failing; later
  // retries change no counted row).
  const db = new pg.Client({ connectionString: system.env.DATABASE_URL });
  await db.connect();
  const takenIn = async () => {
    const text = await (await fetch(`${system.url("webhook-dispatcher")}/metrics`)).text();
    const line = text
      .split("\n")
      .find((l) => l.startsWith("webhook_events_received_total{") && l.includes('result="recorded"'));
    return Number(line?.split(" ").pop() ?? 0);
  };
  await waitFor(
    async () => {
      const { rows } = await db.query(
        "select (select count(*) from delivery.outbox where published_at is null) as unpublished, (select count(*) from delivery.outbox) as events, (select count(*) from webhooks.messages where attempts = 0) as untried",
      );
      return rows[0].unpublished === "0" && rows[0].untried === "0" && (await takenIn()) === Number(rows[0].events);
    },
    15_000,
    "setup events settled",
  );
  await db.end();
  before_ = await fingerprint(system.env.DATABASE_URL as string);
});
after(async () => system?.teardown());

/** The operator API's routes the suite attacks (the operator API has no OpenAPI document). */
function opsRouteList(): Array<[string, string]> {
  return [
    ["GET", "/ops/v1/accounts"],
    ["POST", "/ops/v1/accounts"],
    ["PATCH", `/ops/v1/accounts/${mine.account_id}`],
    ["POST", `/ops/v1/accounts/${mine.account_id}/users`],
    ["POST", `/ops/v1/accounts/${mine.account_id}/package_types`],
    ["POST", `/ops/v1/accounts/${mine.account_id}/zones`],
    ["POST", `/ops/v1/accounts/${mine.account_id}/addresses`],
    ["PUT", `/ops/v1/accounts/${mine.account_id}/default_place`],
    ["POST", `/ops/v1/accounts/${mine.account_id}/tariffs`],
    ["POST", "/ops/v1/messengers"],
    ["POST", "/ops/v1/vehicles"],
    ["POST", "/ops/v1/rounds"],
    ["PATCH", `/ops/v1/deliveries/${ids.myDelivery}/status`],
    ["POST", "/ops/v1/tasks/999999/complete"],
    ["PUT", `/ops/v1/accounts/${mine.account_id}/courier_simulator`],
  ];
}

async function check(request: RawRequest, options: { page?: boolean } = {}) {
  const answer = await send(request);
  assertWellAnswered(`${request.method} ${request.path}`, answer, options);
  return answer;
}

describe("hostile input: no 5xx, errors in the spec's shape, nothing written", () => {
  test("client API: deliveries and webhooks, with any credentials and anyone's ids", async () => {
    const validCreate = outboundDelivery(mine);
    const validUpdate = {
      comments: "c",
      client_order_reference: "r",
      packages: validCreate.packages,
      dropoff: { slot_starting_at: validCreate.dropoff.slot_starting_at },
    };
    const auth = fc.constantFrom<Record<string, string | string[]>>(
      clientHeaders(mine),
      {},
      { "x-user-email": mine.email, "x-user-token": `${mine.token}x` },
      { "x-user-email": [mine.email, other.email], "x-user-token": mine.token },
      { "x-user-email": mine.email, "x-user-token": [mine.token, other.token] },
      { "x-user-email": mine.email.toUpperCase(), "x-user-token": "x".repeat(8000) },
    );
    // Own ids only where no valid operation could follow (no cancel, delete or rotate of our own).
    const delivery = fc.oneof(
      hostileId.filter((id) => id !== String(ids.myDelivery)),
      fc.constant(String(ids.otherDelivery)),
    );
    const webhook = fc.oneof(hostileId, fc.constant(ids.otherWebhook), fc.uuid());
    const route = fc.oneof(
      fc.tuple(
        fc.constantFrom("GET"),
        fc.oneof(
          fc.constant("/api/v2/package_types"),
          hostileQuery.map((q) => `/api/v2/deliveries${q}`),
          hostileQuery.map((q) => `/api/v2/deliveries/latest${q}`),
        ),
      ),
      fc.tuple(
        fc.constantFrom("POST"),
        fc.constantFrom("/api/v2/deliveries", "/api/v2/deliveries/quote", "/api/v2/webhooks", "/api/v1/deliveries"),
      ),
      fc.tuple(
        fc.constantFrom("GET", "PATCH", "PUT"),
        fc.oneof(delivery, fc.constant(String(ids.myDelivery))).map((id) => `/api/v2/deliveries/${id}`),
      ),
      fc.tuple(
        fc.constantFrom("PATCH"),
        delivery.map((id) => `/api/v2/deliveries/${id}/cancel`),
      ),
      fc.tuple(
        fc.constantFrom("POST"),
        fc.oneof(delivery, fc.constant(String(ids.myDelivery))).map((id) => `/api/v2/deliveries/${id}/redelivery`),
      ),
      fc.tuple(
        fc.constantFrom("DELETE"),
        webhook.map((id) => `/api/v2/webhooks/${id}`),
      ),
      fc.tuple(
        fc.constantFrom("POST"),
        webhook.map((id) => `/api/v2/webhooks/${id}/rotate`),
      ),
      fc.tuple(
        fc.constantFrom("GET"),
        fc
          .tuple(fc.oneof(webhook, fc.constant(ids.myWebhook)), hostileQuery)
          .map(([id, q]) => `/api/v2/webhooks/${id}/attempts${q}`),
      ),
      fc.tuple(
        fc.constantFrom("POST"),
        fc.oneof(webhook, fc.constant(ids.myWebhook)).map((id) => `/api/v2/webhooks/${id}/replay`),
      ),
    );
    const bodies = hostileBodies([
      validCreate,
      validUpdate,
      { url: "http://127.0.0.1:9/x", events: ["delivery.created"] },
      { since: new Date().toISOString() },
    ]);
    await fc.assert(
      fc.asyncProperty(
        route,
        auth,
        bodies,
        fc.option(fc.string({ maxLength: 300 })),
        async ([method, path], headers, body, key) => {
          const withBody = method !== "GET" && method !== "DELETE";
          const all: Record<string, string | string[]> = { ...headers };
          if (withBody && body.type) all["content-type"] = body.type;
          if (key !== null) all["idempotency-key"] = encodeURIComponent(key);
          const answer = await check({ base: api, method, path, headers: all, body: withBody ? body.body : undefined });
          // Another account's delivery or webhook is unknown here, never forbidden nor shown.
          const segments = path.split(/[/?]/);
          if (segments.includes(String(ids.otherDelivery)) || segments.includes(ids.otherWebhook)) {
            assert.ok([401, 404, 413, 415, 400, 422].includes(answer.status), `${method} ${path} → ${answer.status}`);
            assert.ok(!answer.body.includes(other.email));
          }
          if (method !== "GET" && answer.status < 300) {
            // Only a PATCH/PUT that changes nothing may pass; the fingerprint below proves it did not write.
            assert.ok(
              method === "PATCH" || method === "PUT",
              `${method} ${path} accepted: ${answer.body.slice(0, 200)}`,
            );
          }
        },
      ),
      { seed: SEED, numRuns: RUNS * 3 },
    );
  });

  test("geolocation interface: known, inactive and unknown vehicles", async () => {
    const valid = {
      latitude: 48.86,
      longitude: 2.34,
      provider: "demo-tracker",
      tracker_id: 7,
      timestamp: new Date().toISOString(),
    };
    const vehicle = fc.oneof(fc.constantFrom("DEMO-VAN-1", "DEMO-VAN-2"), hostileId);
    await fc.assert(
      fc.asyncProperty(vehicle, hostileBodies([valid]), async (id, body) => {
        const headers: Record<string, string> = body.type ? { "content-type": body.type } : {};
        await check({
          base: geo,
          method: "POST",
          path: `/external/vehicles/${id}/geolocations`,
          headers,
          body: body.body,
        });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("operator APIs: without the token every route is 401; with it, hostile bodies are refused", async () => {
    const opsRoutes = opsRouteList();
    const token = fc.constantFrom<Record<string, string | string[]>>(
      {},
      { authorization: "Bearer wrong" },
      { authorization: `Basic ${opsHeaders.authorization}` },
      { authorization: ["Bearer x", opsHeaders.authorization] },
      { authorization: `Bearer ${"x".repeat(9000)}` },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...opsRoutes),
        token,
        hostileBodies([{ company_name: "X" }]),
        async ([method, path], auth, body) => {
          const headers = { ...auth, ...(body.type ? { "content-type": body.type } : {}) };
          const answer = await check({
            base: system.opsUrl,
            method,
            path,
            headers,
            body: method === "GET" ? undefined : body.body,
          });
          assert.ok(
            [401, 413, 415, 400].includes(answer.status),
            `${method} ${path} without the token → ${answer.status}`,
          );
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    // With the token: the bodies are hostile, so each write is refused (random JSON never holds the required fields).
    const writes = opsRoutes.filter(([method]) => method !== "GET" && method !== "PATCH");
    const bodies = hostileBodies([{ name: "n" }]);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...writes), bodies, async ([method, path], body) => {
        const headers = { ...opsHeaders, ...(body.type ? { "content-type": body.type } : {}) };
        const answer = await check({ base: system.opsUrl, method, path, headers, body: body.body });
        assert.ok(answer.status >= 400, `${method} ${path} accepted ${body.body?.subarray(0, 200).toString()}`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    for (const auth of [
      {} as Record<string, string>,
      { authorization: "Bearer wrong" },
      { authorization: `Bearer ${GEO_OPS_TOKEN}` },
    ]) {
      const answer = await check({
        base: geo,
        method: "GET",
        path: "/ops/v1/rounds/abc/track?limit=-1",
        headers: auth,
      });
      assert.ok(answer.status === 401 || answer.status === 422 || answer.status === 404, String(answer.status));
    }
  });

  test("tracking pages and media: unknown, malformed and huge tokens", async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileId,
        fc.constantFrom("", "/state", "/events"),
        fc.boolean(),
        async (token, suffix, media) => {
          const path = media ? `/media/${token}` : `/track/${token}${suffix}`;
          const answer = await check({ base: api, method: "GET", path, headers: {} }, { page: true });
          assert.ok(
            answer.status === 404 || answer.status === 400 || answer.status === 422,
            `${path} → ${answer.status}`,
          );
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("header abuse on the wire: huge, repeated, CR/LF and NUL in values, malformed lines", async () => {
    const path = `/api/v2/deliveries/${ids.myDelivery}`;
    const heads = [
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-User-Email: ${mine.email}\r\nX-User-Token: ${"t".repeat(70_000)}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join("\r\n")}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-User-Email: ${mine.email}\rX-User-Token: ${mine.token}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-User-Email: ${mine.email}\nX-User-Token: ${mine.token}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-User-Email: ${mine.email}\u0000\r\nX-User-Token: ${mine.token}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX User Email: ${mine.email}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-User-Email: ${mine.email}\r\nX-User-Email: ${other.email}\r\nX-User-Token: ${mine.token}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-User-Email: caf\u00e9@x\r\nX-User-Token: ${mine.token}\r\n\r\n`,
      `POST /api/v2/deliveries HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `GET /api/v2/deliveries HTTP/9.9\r\nHost: x\r\n\r\n`,
      `\u0000\u0001 garbage\r\n\r\n`,
    ];
    for (const [base, head] of heads.flatMap((h) => [api, geo].map((b) => [b, h] as const))) {
      const answer = await sendRawHead(base, Buffer.from(head, "latin1"));
      assertWellAnswered(`raw ${JSON.stringify(head.slice(0, 80))}`, answer);
      assert.ok(answer.status >= 400, `raw ${JSON.stringify(head.slice(0, 80))} → ${answer.status}`);
    }
  });

  test("size-driven bodies: the largest under each route's limit, refused at once with a short answer", async () => {
    const doc = (await call(`${api}/api/v2/openapi.json`, "GET", {})).body as Parameters<
      typeof writeRoutesFromOpenApi
    >[0];
    const clientRoutes = writeRoutesFromOpenApi(doc, { delivery_id: String(ids.myDelivery), id: ids.myWebhook });
    assert.ok(clientRoutes.length >= 6, `client write routes: ${clientRoutes.map((r) => `${r.method} ${r.path}`)}`);
    const apiLimit = Number(system.env.API_BODY_LIMIT_BYTES ?? 262_144);
    const targets = [
      ...clientRoutes.map((route) => ({ base: api, route, limit: apiLimit, headers: clientHeaders(mine) })),
      ...opsRouteList()
        .filter(([method]) => method !== "GET")
        .map(([method, path]) => ({
          base: system.opsUrl,
          route: { method, path, arrays: [], strings: [] },
          limit: apiLimit,
          headers: opsHeaders,
        })),
      {
        base: geo,
        route: {
          method: "POST",
          path: "/external/vehicles/DEMO-VAN-1/geolocations",
          arrays: [],
          strings: ["provider"],
        },
        limit: 16 * 1024,
        headers: {},
      },
    ];
    const figures: string[] = [];
    let slowest = 0;
    for (const { base, route, limit, headers } of targets) {
      for (const { kind, body } of worstCaseBodies(route, limit)) {
        const label = `${route.method} ${route.path} [${kind}, ${body.length} B]`;
        assert.ok(body.length <= limit, label);
        const started = performance.now();
        const answer = await check({
          base,
          method: route.method,
          path: route.path,
          headers: { ...headers, "content-type": "application/json" },
          body: Buffer.from(body),
        });
        const ms = performance.now() - started;
        slowest = Math.max(slowest, ms);
        figures.push(`${label}: ${answer.status} in ${ms.toFixed(1)} ms, ${answer.body.length} B answer`);
        assert.equal(answer.status, 422, `${label} → ${answer.status} ${answer.body.slice(0, 200)}`);
        assert.ok(answer.body.length < 4096, `${label}: ${answer.body.length} B answer`);
        // Before the bounded validation, 32 KB of numbers took 6.6 s; now a few ms on a quiet
        // machine. The bound leaves room for a loaded 2-core machine.
        assert.ok(ms < 1500, `${label}: ${ms.toFixed(0)} ms`);
      }
    }
    console.log(`size-driven bodies (slowest ${slowest.toFixed(1)} ms):\n  ${figures.join("\n  ")}`);
  });

  test("the database is exactly as before", async () => {
    assert.deepEqual(await fingerprint(system.env.DATABASE_URL as string), before_);
  });
});
