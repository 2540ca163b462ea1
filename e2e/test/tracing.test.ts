/**
 * One trace from a client's create to the webhook POST, across the four processes: every
 * service writes its finished spans as JSON lines to one file (TRACES_FILE), the create is sent
 * with a known `traceparent`, and the spans of that trace id are read back: the HTTP create and
 * its route handler (@fastify/otel), the handler's PostgreSQL queries, the pricing request
 * (client and server, over NATS), the relay's publish, the dispatcher's intake, the webhook POST
 * and its HTTP request (undici), each the child of the one before; the receiver got
 * `traceparent` of that request.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Delivery } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedAccounts } from "../src/client.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";

interface SpanLine {
  service: string;
  scope: string;
  name: string;
  kind: number;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  attributes: Record<string, unknown>;
}

interface Arrival {
  traceparent: string | undefined;
  body: { id: string; type: string; delivery_id: number };
}

const SPANS_FILE = path.join(tmpdir(), `dos-e2e-spans-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);
let system: SystemUnderTest;
let account: SeededAccount;
let receiver: http.Server;
const arrivals: Arrival[] = [];

before(async () => {
  system = await bootSystemUnderTest({ TRACES_FILE: SPANS_FILE });
  [account] = seedAccounts(system) as [SeededAccount];
  // A receiver that only records what arrived: signatures have their own tests.
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const traceparent = request.headers.traceparent;
      arrivals.push({
        traceparent: traceparent as string | undefined,
        body: JSON.parse(Buffer.concat(chunks).toString()),
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const registered = await call(`${system.url("delivery-api")}/api/v2/webhooks`, "POST", clientHeaders(account), {
    url,
  });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
});
after(async () => {
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await system?.teardown();
  rmSync(SPANS_FILE, { force: true });
});

function spansOf(traceId: string): SpanLine[] {
  let text = "";
  try {
    text = readFileSync(SPANS_FILE, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SpanLine)
    .filter((span) => span.trace_id === traceId);
}

test("one trace id runs from the create request through NATS to the webhook POST", async () => {
  const traceId = randomBytes(16).toString("hex");
  const callerSpan = randomBytes(8).toString("hex");
  const created = await call(
    `${system.url("delivery-api")}/api/v2/deliveries`,
    "POST",
    { ...clientHeaders(account), traceparent: `00-${traceId}-${callerSpan}-01` },
    outboundDelivery(account, "traced"),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const delivery = created.body as Delivery;

  await waitFor(async () => arrivals.some((a) => a.body.delivery_id === delivery.id), 15_000);
  const arrival = arrivals.find((a) => a.body.delivery_id === delivery.id) as Arrival;
  assert.equal(arrival.body.type, "delivery.created");
  const [version, receivedTrace, receivedParent] = (arrival.traceparent ?? "").split("-");
  assert.equal(version, "00");
  assert.equal(receivedTrace, traceId, "the receiver got the create's trace id in traceparent");

  // Spans are exported in batches (every 2 s), each process on its own: wait for each process's
  // last span of the chain (pricing's batch can come after webhook-dispatcher's on a busy machine).
  const find = (service: string, name: string) =>
    spansOf(traceId).find((s) => s.service === service && s.name === name);
  await waitFor(async () => find("webhook-dispatcher", "webhook POST") !== undefined, 15_000);
  await waitFor(async () => find("delivery-api", "POST /api/v2/deliveries") !== undefined, 10_000);
  await waitFor(async () => find("pricing", "pricing quote") !== undefined, 10_000);

  const spans = spansOf(traceId);
  const create = find("delivery-api", "POST /api/v2/deliveries");
  const handler = spans.find((s) => s.scope === "@fastify/otel" && s.parent_span_id === create?.span_id);
  // The delivery's INSERT, as the PostgreSQL instrumentation saw it (a named statement).
  const insert = spans.find(
    (s) =>
      s.scope === "@opentelemetry/instrumentation-pg" &&
      /\binsert\b/i.test(String(s.attributes["db.query.text"])) &&
      s.parent_span_id === handler?.span_id,
  );
  const pricingClient = find("delivery-api", "pricing quote");
  const pricingServer = find("pricing", "pricing quote");
  const publish = find("delivery-api", "delivery-events publish");
  const intake = find("webhook-dispatcher", "delivery-events intake");
  const post = find("webhook-dispatcher", "webhook POST");
  const request = spans.find(
    (s) => s.service === "webhook-dispatcher" && s.name === "POST" && s.parent_span_id === post?.span_id,
  );
  const found = { create, handler, insert, pricingClient, pricingServer, publish, intake, post, request };
  for (const [label, span] of Object.entries(found)) {
    assert.ok(span, `${label} span of trace ${traceId}: ${JSON.stringify(spans.map((s) => [s.service, s.name]))}`);
  }
  // Each the child of the one before it.
  assert.equal(create?.parent_span_id, callerSpan);
  assert.equal(create?.kind, 1, "SERVER");
  assert.equal(create?.attributes["http.response.status_code"], 201);
  assert.equal(pricingClient?.parent_span_id, handler?.span_id);
  assert.equal(pricingServer?.parent_span_id, pricingClient?.span_id);
  assert.equal(publish?.parent_span_id, handler?.span_id);
  assert.equal(publish?.attributes["messaging.message.id"], arrival.body.id);
  assert.equal(intake?.parent_span_id, publish?.span_id);
  assert.equal(post?.parent_span_id, intake?.span_id);
  assert.equal(post?.attributes["http.response.status_code"], 204);
  assert.equal(request?.kind, 2, "CLIENT");
  assert.equal(receivedParent, request?.span_id, "the receiver's parent span is the POST's HTTP request");
});
