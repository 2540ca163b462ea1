/**
 * The console's backend for the staff's System, Staff and role checks, over HTTP as a browser
 * (cookies, CSRF) against the whole system: the services' readiness, webhook backlog and dead
 * letters and positions per second read from their own /readyz and /metrics (a stopped service
 * shown as not answering, one reading serving every page); an administrator inviting staff, the
 * role asked of delivery-api at each call; and the roles at the edge: a shop session finds none of
 * the operator API's routes, a read-only person's changes are refused by delivery-api itself.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { waitFor } from "@dos/service-kit/testing";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../../../e2e/src/client.ts";
import { GEO_OPS_TOKEN, operator } from "../../../e2e/src/operator.ts";
import { killService, restartService } from "../../../e2e/src/system.ts";
import { registerReceiver, startWebhookReceiver, type WebhookReceiver } from "../../../e2e/src/webhook-receiver.ts";
import type { SystemView } from "../src/shared/page-shapes.ts";
import { type ConsoleBed, startConsoleBed } from "./console-harness.ts";
import { Browser } from "./http-browser.ts";
import { signedInShopUser, signedInStaff } from "./staff-session.ts";

/** Short, so that a test sees a new reading within a second; the default is 5. */
const SAMPLE_SECONDS = 1;
const TIMEOUT_MS = 1500;

let bed: ConsoleBed;
let account: SeededAccount;
const receivers: WebhookReceiver[] = [];
before(async () => {
  bed = await startConsoleBed({
    CONSOLE_SYSTEM_SAMPLE_SECONDS: String(SAMPLE_SECONDS),
    CONSOLE_SYSTEM_TIMEOUT_MS: String(TIMEOUT_MS),
    CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: "100000",
    // geo-ingest's operator endpoint: the test reads a round's track to know a position is stored.
    GEO_OPS_TOKEN,
    // A failed webhook is tried again an hour later: it waits in the backlog meanwhile.
    WEBHOOKS_RETRY_SCHEDULE: "0,1h",
  });
  [account] = seedAccounts(bed.system) as [SeededAccount];
});
after(async () => {
  for (const receiver of receivers) await receiver.stop();
  await bed?.close();
});

async function reading(browser: Browser): Promise<SystemView> {
  const answer = await browser.call("GET", "/api/staff/system");
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.headers.get("cache-control"), "no-store");
  return answer.body as SystemView;
}

/** A reading taken after `since` (readings are kept SAMPLE_SECONDS). */
async function newReading(browser: Browser, since: number, check: (view: SystemView) => boolean = () => true) {
  return waitFor(
    async () => {
      const view = await reading(browser);
      return Date.parse(view.sampled_at) > since && check(view) ? view : undefined;
    },
    30_000,
    "a new reading",
  );
}

const service = (view: SystemView, name: string) => view.services.find((s) => s.name === name);

describe("the System reading", () => {
  test("is for a staff session only: a shop session or none finds no such route", async () => {
    const { browser: shop } = await signedInShopUser(bed);
    for (const who of [shop, new Browser(bed.url)]) {
      const answer = await who.call("GET", "/api/staff/system");
      assert.deepEqual([answer.status, answer.body], [404, { errors: ["route GET /api/staff/system not found"] }]);
    }
    // A person disabled since signing in: their session ends at this call.
    const { staff, browser } = await signedInStaff(bed, "read_only");
    assert.equal((await browser.call("GET", "/api/staff/system")).status, 200);
    assert.equal((await bed.ops("PATCH", `/staff/${staff.id}`, { disabled: true })).status, 200);
    assert.equal((await browser.call("GET", "/api/staff/system")).status, 404);
    assert.equal((await browser.call("GET", "/api/staff/session")).body.signed_in, false);
  });

  test("every service and its replica ready, read on its own /readyz; the console's own readiness too", async () => {
    const { browser } = await signedInStaff(bed, "read_only");
    const view = await reading(browser);
    assert.deepEqual(
      view.services.map((s) => [s.name, s.state]),
      [
        ["delivery-api", "ready"],
        ["geo-ingest", "ready"],
        ["pricing", "ready"],
        ["webhook-dispatcher", "ready"],
        ["console", "ready"],
      ],
    );
    const ports = Object.fromEntries(bed.system.services.map((s) => [s.spec.name, new URL(s.url).host] as const));
    for (const name of ["delivery-api", "geo-ingest", "pricing", "webhook-dispatcher"]) {
      assert.deepEqual(service(view, name)?.replicas, [{ address: ports[name], state: "ready", problems: [] }]);
    }
    assert.deepEqual(service(view, "console")?.replicas, [{ address: "this replica", state: "ready", problems: [] }]);
    assert.equal(view.webhooks.replicas_read, 1);
    assert.equal(view.positions.replicas_read, 1);
  });

  test("the webhook backlog and dead letters, from webhook-dispatcher's metrics", async () => {
    const { browser } = await signedInStaff(bed, "dispatcher");
    const first = await reading(browser);
    const headers = clientHeaders(account);
    // One endpoint is gone (410: dead-lettered at once), the other fails (500: tried again in an hour).
    const gone = await startWebhookReceiver();
    const failing = await startWebhookReceiver();
    receivers.push(gone, failing);
    gone.failWith(410);
    failing.failWith(500);
    await registerReceiver(bed.system.url("delivery-api"), headers, gone);
    await registerReceiver(bed.system.url("delivery-api"), headers, failing);
    const created = await call(
      `${bed.system.url("delivery-api")}/api/v2/deliveries`,
      "POST",
      headers,
      outboundDelivery(account, "system-webhooks"),
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const seen = await newReading(
      browser,
      Date.parse(first.sampled_at),
      (view) =>
        (view.webhooks.dead_lettered_since_start ?? 0) > (first.webhooks.dead_lettered_since_start ?? 0) &&
        (view.webhooks.backlog ?? 0) > (first.webhooks.backlog ?? 0),
    );
    assert.equal(seen.webhooks.dead_lettered_since_start, (first.webhooks.dead_lettered_since_start ?? 0) + 1);
    assert.equal(
      seen.webhooks.dead_lettered_by_reason.attempts,
      (first.webhooks.dead_lettered_by_reason.attempts ?? 0) + 1,
    );
    assert.equal(seen.webhooks.backlog, (first.webhooks.backlog ?? 0) + 1);
  });

  test("positions per second: positions stored for an active round are counted, and their rate measured", async () => {
    const { browser } = await signedInStaff(bed, "read_only");
    const created = await call(
      `${bed.system.url("delivery-api")}/api/v2/deliveries`,
      "POST",
      clientHeaders(account),
      outboundDelivery(account, "system-positions"),
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const fleet = operator(bed.system.opsUrl, bed.system.url("geo-ingest"));
    const round = await fleet.startRound([(created.body as { id: number }).id]);

    const start = await newReading(browser, Date.now());
    // Readings taken all along, as an open System page takes them.
    const seen: SystemView[] = [];
    let posting = true;
    const watching = (async () => {
      while (posting) seen.push(await newReading(browser, Date.parse(seen.at(-1)?.sampled_at ?? start.sampled_at)));
    })();
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) await fleet.storedPosition(round, 48.86 + i / 1000, 2.35, new Date(t0 + i * 1000));
    const stored = (start.positions.stored_since_start ?? 0) + 3;
    await waitFor(async () => (seen.at(-1)?.positions.stored_since_start === stored ? true : undefined), 30_000);
    posting = false;
    await watching;

    const measured = seen.filter((view) => (view.positions.per_second ?? 0) > 0);
    assert.ok(measured.length > 0, JSON.stringify(seen.map((v) => v.positions)));
    for (const view of measured) {
      assert.equal(view.positions.replicas_measured, 1);
      assert.ok((view.positions.window_seconds ?? 0) >= SAMPLE_SECONDS * 0.5, JSON.stringify(view.positions));
    }
    // Over the readings, the rates times their windows add up to the positions stored.
    const counted = seen.reduce((sum, v) => sum + (v.positions.per_second ?? 0) * (v.positions.window_seconds ?? 0), 0);
    assert.ok(Math.abs(counted - 3) < 0.2, `${counted}`);
  });

  test("one reading serves every page within the interval: many pages, one scrape of each service", async () => {
    const { browser } = await signedInStaff(bed, "dispatcher");
    const geo = bed.system.url("geo-ingest");
    const scrapes = async () => {
      const text = await (await fetch(`${geo}/metrics`)).text();
      const line = text
        .split("\n")
        .find((l) => l.startsWith("http_request_duration_seconds_count{") && l.includes('route="/metrics"'));
      return Number(line?.split(" ").at(-1) ?? 0);
    };
    const before = await scrapes();
    const views = await Promise.all(Array.from({ length: 20 }, () => reading(browser)));
    // The test's own read of the count is one /metrics request too.
    const made = (await scrapes()) - before - 1;
    const readings = new Set(views.map((v) => v.sampled_at));
    assert.ok(made >= 0 && made <= 2, `${made} scrapes for 20 pages`);
    assert.ok(readings.size <= 2, `${readings.size} readings for 20 pages`);
  });

  test("a hung service is shown as not answering within the timeout, the others still read; back when it resumes", async () => {
    const { browser } = await signedInStaff(bed, "read_only");
    const pricing = bed.system.services.find((s) => s.spec.name === "pricing");
    assert.ok(pricing?.child.pid);
    // Stopped, not killed: its port still accepts connections and never answers, as a hung process.
    process.kill(pricing.child.pid, "SIGSTOP");
    try {
      const since = Date.now();
      const hung = await newReading(browser, since, (view) => service(view, "pricing")?.state === "not_answering");
      assert.deepEqual(service(hung, "pricing")?.replicas, [
        { address: new URL(pricing.url).host, state: "not_answering", problems: [`no answer within ${TIMEOUT_MS} ms`] },
      ]);
      for (const name of ["delivery-api", "geo-ingest", "webhook-dispatcher", "console"]) {
        assert.equal(service(hung, name)?.state, "ready", name);
      }
      // Each page's call answers, though the service does not: the deadline bounds the reading.
      const bounded = await fetch(`${bed.url}/api/staff/system`, {
        headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
        signal: AbortSignal.timeout(TIMEOUT_MS + 10_000),
      });
      assert.equal(bounded.status, 200);
    } finally {
      process.kill(pricing.child.pid, "SIGCONT");
    }
    await newReading(browser, Date.now(), (view) => service(view, "pricing")?.state === "ready");
  });

  test("delivery-api down: the page still reads, its session vouched for by the console, and shows it", async () => {
    const { browser } = await signedInStaff(bed, "read_only");
    const api = bed.system.services.find((s) => s.spec.name === "delivery-api");
    assert.ok(api);
    await killService(bed.system, "delivery-api");
    try {
      const down = await newReading(browser, Date.now(), (view) => service(view, "delivery-api")?.state !== "ready");
      assert.deepEqual(service(down, "delivery-api"), {
        name: "delivery-api",
        state: "not_answering",
        replicas: [{ address: new URL(api.url).host, state: "not_answering", problems: ["connection refused"] }],
        problems: [],
      });
      assert.equal(service(down, "geo-ingest")?.state, "ready");
      // A stranger still finds nothing.
      assert.equal((await new Browser(bed.url).call("GET", "/api/staff/system")).status, 404);
    } finally {
      await restartService(bed.system, "delivery-api");
    }
    await newReading(browser, Date.now(), (view) => service(view, "delivery-api")?.state === "ready");
  });
});

describe("staff invitations from the pages", () => {
  test("an administrator invites; the role is delivery-api's at each call, never the page's", async () => {
    const { staff: admin, browser } = await signedInStaff(bed, "admin");
    const newcomer = await bed.newStaff("dispatcher");
    const sent = await browser.call("POST", "/api/staff/invitations", { email: newcomer.email.toUpperCase() });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.equal(sent.body.email, newcomer.email);
    assert.match(await bed.lastLinkTo(newcomer.email), /\/staff\/invitation#token=/);

    const refusals: Array<[unknown, number, string]> = [
      [
        { email: "nobody-here@operator.example" },
        404,
        "staff member with e-mail nobody-here@operator.example not found",
      ],
      [{ email: "not an e-mail" }, 422, "email"],
      [{ email: newcomer.email, role: "admin" }, 422, "role"],
    ];
    for (const [body, status, message] of refusals) {
      const answer = await browser.call("POST", "/api/staff/invitations", body);
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.ok(
        answer.body.errors.some((e: string) => e.includes(message)),
        JSON.stringify(answer.body),
      );
    }
    const noCsrf = await browser.call("POST", "/api/staff/invitations", { email: newcomer.email }, { csrf: false });
    assert.equal(noCsrf.status, 403);

    // Made a dispatcher by another administrator (the CLI, say): the same session is refused at once.
    assert.equal((await bed.ops("PATCH", `/staff/${admin.id}`, { role: "dispatcher" })).status, 200);
    const demoted = await browser.call("POST", "/api/staff/invitations", { email: newcomer.email });
    assert.deepEqual(
      [demoted.status, demoted.body],
      [403, { errors: ["dispatcher may not invite staff: administrators only"] }],
    );
    // Disabled: the session is over.
    assert.equal((await bed.ops("PATCH", `/staff/${admin.id}`, { disabled: true })).status, 200);
    const ended = await browser.call("POST", "/api/staff/invitations", { email: newcomer.email });
    assert.equal(ended.status, 401, JSON.stringify(ended.body));
    assert.equal((await browser.call("GET", "/api/staff/session")).body.signed_in, false);
  });

  test("a dispatcher, a read-only person, a shop user or a stranger cannot invite", async () => {
    const newcomer = await bed.newStaff("read_only");
    for (const role of ["dispatcher", "read_only"] as const) {
      const { browser } = await signedInStaff(bed, role);
      const answer = await browser.call("POST", "/api/staff/invitations", { email: newcomer.email });
      assert.deepEqual(
        [answer.status, answer.body],
        [403, { errors: [`${role} may not invite staff: administrators only`] }],
      );
    }
    const { browser: shop } = await signedInShopUser(bed);
    const stranger = new Browser(bed.url);
    await stranger.open();
    for (const who of [shop, stranger]) {
      const answer = await who.call("POST", "/api/staff/invitations", { email: newcomer.email });
      assert.deepEqual(
        [answer.status, answer.body],
        [404, { errors: ["route POST /api/staff/invitations not found"] }],
      );
    }
    // No e-mail went out.
    await assert.rejects(bed.lastLinkTo(newcomer.email));
  });
});

/** Every route of the operator API's document, with its parameters given as 1. */
function documentedRoutes(): Array<{ method: string; route: string; path: string }> {
  const document = JSON.parse(
    readFileSync(new URL("../../../libs/contracts/openapi/ops-v1.json", import.meta.url), "utf8"),
  ) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).flatMap(([route, operations]) =>
    Object.keys(operations)
      .filter((method) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map((method) => ({ method: method.toUpperCase(), route, path: route.replace(/\{[^}]+\}/g, "1") })),
  );
}

describe("roles at the console's edge", () => {
  test("a shop user finds none of the operator API's routes through the console: each one, any method, is a 404", async () => {
    const { browser: shop } = await signedInShopUser(bed);
    const routes = documentedRoutes();
    assert.ok(routes.length >= 70, `${routes.length} routes in the document`);
    for (const { method, path } of routes) {
      const answer = await shop.call(method, path, method === "GET" ? undefined : {});
      assert.deepEqual(
        [answer.status, answer.body],
        [404, { errors: [`route ${method} ${path} not found`] }],
        `${method} ${path}`,
      );
    }
  });

  test("a read-only person's changes are refused by delivery-api itself, route by route (403 naming the role)", async () => {
    const { browser: reader } = await signedInStaff(bed, "read_only");
    // What the contract lets a read-only person do: read (the staff aside), and their own personal tokens.
    const allowed = (method: string, route: string) =>
      route.startsWith("/ops/v1/staff/me") || (method === "GET" && !route.startsWith("/ops/v1/staff"));
    let refused = 0;
    for (const { method, route, path } of documentedRoutes()) {
      const answer = await reader.call(method, path, method === "GET" ? undefined : {});
      if (allowed(method, route)) {
        assert.notEqual(answer.status, 403, `${method} ${route}: ${JSON.stringify(answer.body)}`);
        continue;
      }
      assert.equal(answer.status, 403, `${method} ${route}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.errors[0], `read_only may not ${method} ${route}`);
      refused++;
    }
    assert.ok(refused >= 40, `${refused} refusals`);
  });
});
