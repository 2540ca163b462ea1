/**
 * The tracking page's event streams under load: pages open on the same deliveries share one read
 * per interval, streams are capped per link and per client address (429, slots freed on close),
 * a cancelled delivery's link expires like a completed one's and its streams end, streams are
 * reaped after their lifetime, and no tracking token reaches the log. Real PostgreSQL, NATS and
 * HTTP connections (client addresses are loopback aliases: 127.0.0.2, 127.0.0.3...).
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { captureLogs, waitFor } from "@dos/service-kit/testing";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, dispatch, opsClient } from "./dispatch-fixtures.ts";
import type { OpsClient } from "./ops-client.ts";

const PUSH_MS = 100;
const TTL_MS = 1000;
const HEARTBEAT_MS = 300;
const LIFETIME_MS = 4000;

const { logger, lines: logLines } = captureLogs("delivery-api-test");

let bed: DeliveriesTestbed;
let ops: OpsClient;
let baseUrl: string;
before(async () => {
  bed = await startDeliveriesTestbed(
    {
      API_TRACKING_PUSH_MS: String(PUSH_MS),
      API_TRACKING_TTL_MS: String(TTL_MS),
      API_TRACKING_HEARTBEAT_MS: String(HEARTBEAT_MS),
      API_TRACKING_STREAM_MAX_MS: String(LIFETIME_MS),
    },
    { logger },
  );
  // No background work (relay, consumers): the statements counted below are the app's requests'.
  await bed.api.app.listen({ port: 0, host: "0.0.0.0" });
  baseUrl = `http://127.0.0.1:${(bed.api.app.server.address() as AddressInfo).port}`;
  ops = opsClient(bed.api);
});
after(async () => {
  for (const stream of openStreams) stream.close();
  await bed.close();
});

interface EventStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Everything received so far. */
  text: () => string;
  /** The `state` events received so far, parsed. */
  states: () => Array<Record<string, unknown>>;
  ended: Promise<void>;
  close: () => void;
}
const openStreams = new Set<EventStream>();

/** Opens `/track/{token}/events` from a client address (a loopback alias) and reads it as it comes. */
function openStream(token: string, from = "127.0.0.1"): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${baseUrl}/track/${token}/events`, { localAddress: from, agent: false }, (response) => {
      let received = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        received += chunk;
      });
      const ended = new Promise<void>((done) => response.on("close", () => done()));
      const stream: EventStream = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        text: () => received,
        states: () => [...received.matchAll(/event: state\ndata: (.*)\n\n/g)].map((m) => JSON.parse(m[1] as string)),
        ended,
        close: () => {
          request.destroy();
          openStreams.delete(stream);
        },
      };
      openStreams.add(stream);
      void ended.then(() => openStreams.delete(stream));
      // A refusal is a whole JSON body: read it before handing the stream over.
      if (stream.status !== 200) return void ended.then(() => resolve(stream));
      response.once("data", () => resolve(stream));
    });
    request.on("error", reject);
  });
}

/** `n` streams on a token from one address, each admitted. */
async function openPages(token: string, n: number, from?: string) {
  const streams: EventStream[] = [];
  for (let i = 0; i < n; i++) {
    const stream = await openStream(token, from);
    assert.equal(stream.status, 200, stream.text());
    streams.push(stream);
  }
  return streams;
}

/** A delivery whose pickup has started: its pickup tracking link works. */
async function startedDelivery(label: string) {
  const created = await createDelivery(bed.api, bed.account);
  const d = await dispatch(ops, created.id, `VAN-${label}`);
  await ops.post(`/rounds/${d.roundId}/start`);
  await ops.post(`/tasks/${d.pickupTask}/start`);
  const { tracking_token } = await bed.api.db
    .selectFrom("tasks")
    .select("tracking_token")
    .where("id", "=", d.pickupTask)
    .executeTakeFirstOrThrow();
  return { id: created.id as number, token: tracking_token as string, ...d };
}

/** Statements the app sends to PostgreSQL while `ms` pass (each one outside a transaction checks a connection out). */
async function statementsDuring(ms: number): Promise<number> {
  let checkouts = 0;
  const count = () => checkouts++;
  bed.api.pool.on("acquire", count);
  await new Promise((resolve) => setTimeout(resolve, ms));
  bed.api.pool.off("acquire", count);
  return checkouts;
}

describe("tracking streams", () => {
  test("ten pages on one delivery, and ten more on another, cost what one page costs", async () => {
    const a = await startedDelivery("SHARE-A");
    const b = await startedDelivery("SHARE-B");
    const [first] = await openPages(a.token, 1);
    const one = await statementsDuring(1000);
    const more = await openPages(a.token, 9);
    const ten = await statementsDuring(1000);
    const other = await openPages(b.token, 10);
    const twenty = await statementsDuring(1000);
    // 1 s at one read per 100 ms: about 10 batch reads (2 statements each while a round is active).
    assert.ok(one >= 5, `the one page's stream is fed: ${one} statements`);
    assert.ok(ten <= one * 1.5 + 5, `10 pages on one delivery: ${ten} statements, 1 page: ${one}`);
    assert.ok(twenty <= one * 1.5 + 5, `10 pages on each of 2 deliveries: ${twenty} statements, 1 page: ${one}`);

    // Every page still sees a change: the messenger's phone position.
    await ops.post(`/messengers/${a.messengerId}/positions`, { latitude: 48.9, longitude: 2.35 });
    const pages = [first as EventStream, ...more];
    await waitFor(
      async () =>
        pages.every((page) => page.states().some((s) => (s.messenger as { latitude?: number })?.latitude === 48.9)),
      5000,
      "the position on every page of delivery A",
    );
    assert.ok(
      other.every((page) => page.states().every((s) => s.messenger === null)),
      "B has no position",
    );
    for (const page of [...pages, ...other]) page.close();
  });

  test("the 11th stream on a link and the 21st from one address are refused with 429; closing frees the slots", async () => {
    const [a, b, c, d] = await Promise.all(["CAP-A", "CAP-B", "CAP-C", "CAP-D"].map(startedDelivery));
    assert.ok(a && b && c && d);
    // One family: ten pages on one link, from several phones (addresses).
    const family = [...(await openPages(a.token, 5, "127.0.0.2")), ...(await openPages(a.token, 5, "127.0.0.4"))];
    const eleventh = await openStream(a.token, "127.0.0.5");
    assert.equal(eleventh.status, 429);
    assert.deepEqual(JSON.parse(eleventh.text()), { errors: ["tracking link has 10 open streams already"] });
    assert.equal(eleventh.headers["retry-after"], "1");

    // One address: twenty streams over two links, then a third link is refused too.
    const crowd = [...(await openPages(b.token, 10, "127.0.0.3")), ...(await openPages(c.token, 10, "127.0.0.3"))];
    const refused = await openStream(d.token, "127.0.0.3");
    assert.equal(refused.status, 429);
    assert.deepEqual(JSON.parse(refused.text()), { errors: ["client address has 20 open tracking streams already"] });
    assert.equal(refused.headers["retry-after"], "1");
    assert.equal((await openStream(d.token, "127.0.0.6")).status, 200, "another address is not held back");

    // A page closes: its slots are free again, on its link and for its address.
    family[0]?.close();
    crowd[0]?.close();
    await waitFor(
      async () => (await openStream(a.token, "127.0.0.5")).status === 200,
      3000,
      "a slot on the link, freed",
    );
    await waitFor(
      async () => (await openStream(d.token, "127.0.0.3")).status === 200,
      3000,
      "a slot of the address, freed",
    );
    for (const stream of [...openStreams]) stream.close();
  });

  test("a cancelled delivery's link expires like a completed one's: its streams end, then 410", async () => {
    const d = await startedDelivery("CANCEL");
    const pages = await openPages(d.token, 2);
    const cancel = await bed.api.app.inject({
      method: "PATCH",
      url: `/api/v2/deliveries/${d.id}/cancel`,
      headers: bed.account.headers,
    });
    assert.equal(cancel.statusCode, 200, cancel.body);
    // The pages first show the cancellation, without the messenger...
    await waitFor(
      async () => pages.every((page) => page.states().some((s) => s.status === "cancelled" && s.messenger === null)),
      3000,
      "cancelled on every page",
    );
    // ...then, the TTL after the cancellation, are told the link is gone and their streams end.
    await Promise.all(pages.map((page) => page.ended));
    for (const page of pages) assert.match(page.text(), /event: gone\n/);

    const page = await bed.api.app.inject({ method: "GET", url: `/track/${d.token}` });
    assert.equal(page.statusCode, 410);
    assert.match(page.body, /<h1>This tracking link has expired<\/h1>/);
    assert.match(page.body, /The delivery it followed was cancelled a while ago\./);
    const state = await bed.api.app.inject({ method: "GET", url: `/track/${d.token}/state` });
    assert.deepEqual([state.statusCode, state.json()], [410, { errors: ["tracking link has expired"] }]);
    assert.equal((await openStream(d.token)).status, 410);
  });

  test("a silent stream gets heartbeats and is ended after its lifetime, freeing its slot", async () => {
    const d = await startedDelivery("LIFETIME");
    const openedAt = Date.now();
    const [page] = await openPages(d.token, 1, "127.0.0.7");
    assert.ok(page);
    await waitFor(async () => page.text().includes(": keep-alive\n\n"), 3000, "a heartbeat");
    await page.ended;
    const lived = Date.now() - openedAt;
    assert.ok(lived >= LIFETIME_MS - 200 && lived < LIFETIME_MS + 3000, `the stream lived ${lived} ms`);
    assert.equal(page.states().length, 1, "no change, no new state: only the first");
    // Its slots are free: a family's ten pages open again from that address.
    const again = await openPages(d.token, 10, "127.0.0.7");
    for (const stream of again) stream.close();
  });

  test("no tracking token or media id reaches the access log", async () => {
    const d = await startedDelivery("LOGS");
    for (const url of [`/track/${d.token}`, `/track/${d.token}/state`, "/media/AAAAAAAAAAAAAAAAAAAAAAAA.png"]) {
      await fetch(`${baseUrl}${url}?from=sms`);
    }
    const streams = await openPages(d.token, 10);
    assert.equal((await openStream(d.token)).status, 429);
    for (const stream of streams) stream.close();

    const access = logLines.filter((line) => line.msg === "request completed");
    const urls = access.map((line) => line.url);
    for (const url of ["/track/[redacted]", "/track/[redacted]/state", "/media/[redacted]"]) {
      assert.ok(urls.includes(`${url}?from=sms`), `${url} logged: ${urls.join(", ")}`);
    }
    assert.ok(urls.includes("/track/[redacted]/events"), "the refused stream is logged, without its token");
    const text = JSON.stringify(logLines);
    assert.ok(!text.includes(d.token), "the token appears nowhere in the log");
    assert.ok(!text.includes("AAAAAAAAAAAAAAAAAAAAAAAA"), "nor the media id");
  });

  test("shutting the service down ends its open streams at once (last: it closes the app)", async () => {
    const d = await startedDelivery("SHUTDOWN");
    const pages = await openPages(d.token, 3);
    const started = Date.now();
    await bed.api.app.close();
    await Promise.all(pages.map((page) => page.ended));
    assert.ok(Date.now() - started < 3000, `closed in ${Date.now() - started} ms`);
  });
});
