/**
 * The pricing client over real NATS, against raw responders on the quote subject: a valid
 * reply is the price; a timeout, no responder, an error reply or a reply off the contract is a
 * 503 with Retry-After, never a price.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { natsNames, type QuoteReply, type QuoteRequest, SERVICE_ERROR_HEADERS } from "@dos/contracts";
import { connectNats, createLogger, createMetrics, HttpError, type Logger, type NatsHandle } from "@dos/service-kit";
import { observeCalls, randomNamespace, testInfra } from "@dos/service-kit/testing";
import { headers, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { createPricingClient, type PricingClient } from "../src/pricing/pricing.client.ts";
import { createTariffReplica } from "../src/pricing/tariff-replica.ts";

const TIMEOUT_MS = 300;
const GATHER_MS = 30;
let nats: NatsHandle;
let responderConnection: NatsHandle;
let client: PricingClient;
let newClient: (nc: NatsConnection, gatherMs: number) => PricingClient;
let subject: string;
const reasons: string[] = [];

before(async () => {
  const logger = createLogger("pricing-client-test", process.env.TEST_LOG_LEVEL ?? "silent");
  const namespace = randomNamespace();
  nats = await connectNats(testInfra().natsUrl, "pricing-client-test", logger);
  responderConnection = await connectNats(testInfra().natsUrl, "pricing-client-test-responder", logger);
  subject = natsNames(namespace).services.pricing.quoteSubject;
  // The client only warns; a recorder of those lines lets the tests check that it says why.
  const recorder = { warn: (details: { reason?: string }) => void reasons.push(details.reason ?? "") };
  newClient = (nc, gatherMs) =>
    createPricingClient({
      nc,
      namespace,
      timeoutMs: TIMEOUT_MS,
      gatherMs,
      logger: recorder as unknown as Logger,
      // NATS stays up here, so the replica is never asked (tariff-replica.test.ts covers it).
      replica: createTariffReplica({ nc: nats.nc, namespace, logger }),
      metrics: createMetrics("delivery-api"),
    });
  client = newClient(nats.nc, GATHER_MS);
});
after(async () => {
  await responderConnection.drain();
  await nats.drain();
});

const request: QuoteRequest = {
  account_id: 3,
  direction: "outbound",
  tasks: [
    {
      kind: "dropoff",
      slot_starting_at: "2030-01-02T09:00:00.000+00:00",
      slot_ending_at: "2030-01-02T11:00:00.000+00:00",
    },
  ],
  packages: [{ amount: 1, volume_dm3: 10, weight_kg: 2 }],
  requested_at: "2030-01-01T09:00:00.000+00:00",
};

/** Answers every quote request with `answer` while `run` runs; records what it was asked. */
async function withResponder(answer: (msg: Msg) => void, run: (asked: unknown[]) => Promise<void>): Promise<void> {
  const asked: unknown[] = [];
  const sub = responderConnection.nc.subscribe(subject, {
    callback: (_error, msg) => {
      asked.push(msg.json());
      answer(msg);
    },
  });
  await responderConnection.nc.flush();
  try {
    await run(asked);
  } finally {
    sub.unsubscribe();
    // The server has dropped the subscription before the next test asks.
    await responderConnection.nc.flush();
  }
}

/** The 503 the client threw, after checking it logged the expected reason. */
async function refusal(reason: string): Promise<HttpError> {
  reasons.length = 0;
  const error = await client.quote(request).then(
    () => assert.fail("a quote was returned"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof HttpError, `an HttpError, got ${String(error)}`);
  assert.deepEqual(reasons, [reason]);
  return error;
}

test("a valid reply is the price, and the request went out as given", async () => {
  const priced: QuoteReply = {
    price_cents: 1250,
    tariff_id: 4,
    lines: [
      { code: "base", label: "Base price (outbound)", amount_cents: 1000 },
      { code: "packages", label: "1 package × 2.50", amount_cents: 250 },
    ],
  };
  await withResponder(
    (msg) => msg.respond(JSON.stringify(priced)),
    async (asked) => {
      assert.deepEqual(await client.quote(request), priced);
      assert.deepEqual(asked, [request]);
    },
  );
});

test("quotes asked close together leave together, each answered with its own price", async () => {
  // Seen where the client hands each request to NATS, by how many quotes had been asked by then:
  // times, at the responder (NATS's delivery) or even here (the machine preempting the process
  // between two microtasks), spread three requests of one turn over 5.5-5.7 ms under load.
  let asked = 0;
  const sent: number[] = [];
  const recording = observeCalls(nats.nc, "request", () => sent.push(asked));
  // A window that a loaded machine's late timers cannot outlast: the three asks below stay in it.
  const gathering = newClient(recording, 500);
  await withResponder(
    (msg) => {
      const { account_id } = msg.json<QuoteRequest>();
      const cents = account_id * 100;
      const lines = [{ code: "base", label: "Base price", amount_cents: cents }];
      msg.respond(JSON.stringify({ price_cents: cents, tariff_id: account_id, lines }));
    },
    async () => {
      // The first goes at once (nothing went before it for a while)...
      assert.equal((await gathering.quote(request)).price_cents, 300);
      sent.length = 0;
      // ...and three asked 5 ms apart right after it wait for each other and leave together.
      const quotes: Array<Promise<QuoteReply>> = [];
      for (const accountId of [11, 12, 13]) {
        quotes.push(gathering.quote({ ...request, account_id: accountId }));
        asked++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const prices = (await Promise.all(quotes)).map((reply) => reply.price_cents);
      assert.deepEqual(prices, [1100, 1200, 1300]);
      assert.deepEqual(sent, [3, 3, 3], "each request left once all three were asked");
    },
  );
});

test("a null price (no tariff) is a valid answer", async () => {
  const none: QuoteReply = { price_cents: null, tariff_id: null, lines: [] };
  await withResponder(
    (msg) => msg.respond(JSON.stringify(none)),
    async () => assert.deepEqual(await client.quote(request), none),
  );
});

test("no answer within the timeout is a 503 with Retry-After", async () => {
  await withResponder(
    () => {},
    async () => {
      const started = Date.now();
      const error = await refusal("timeout");
      assert.ok(Date.now() - started >= TIMEOUT_MS - 20);
      assert.equal(error.statusCode, 503);
      assert.deepEqual(error.messages, [`pricing did not answer within ${TIMEOUT_MS} ms; retry later`]);
      assert.deepEqual(error.headers, { "retry-after": "5" });
    },
  );
});

test("no pricing replica at all is a 503 with Retry-After", async () => {
  const error = await refusal("no responders");
  assert.equal(error.statusCode, 503);
  assert.deepEqual(error.messages, ["pricing is temporarily unavailable; retry later"]);
  assert.deepEqual(error.headers, { "retry-after": "5" });
});

test("a reply that breaks the contract is a 503, never a price", async () => {
  const schema = "reply breaks the QuoteReply schema";
  const invalidReplies: Array<[string, string]> = [
    ["not json", "reply is not JSON"],
    [JSON.stringify({ price_cents: "12.50", tariff_id: 4, lines: [] }), schema],
    [JSON.stringify({ price_cents: -5, tariff_id: 4, lines: [] }), schema],
    [JSON.stringify({ price_cents: 1250, tariff_id: 4 }), schema],
    [JSON.stringify({ price_cents: 1250, tariff_id: 4, lines: [], discount: 3 }), schema],
    // Valid shapes, but the lines do not add up to the price / a null price names a tariff.
    [
      JSON.stringify({ price_cents: 1250, tariff_id: 4, lines: [{ code: "base", label: "Base", amount_cents: 1000 }] }),
      "the lines add up to 1000, not to price_cents 1250",
    ],
    [JSON.stringify({ price_cents: null, tariff_id: 4, lines: [] }), "a null price came with a tariff or lines"],
  ];
  for (const [body, reason] of invalidReplies) {
    await withResponder(
      (msg) => msg.respond(body),
      async () => {
        const error = await refusal(reason);
        assert.equal(error.statusCode, 503, body);
        assert.deepEqual(error.messages, ["pricing is temporarily unavailable; retry later"]);
        assert.deepEqual(error.headers, { "retry-after": "5" });
      },
    );
  }
});

test("an error reply of the services framework is a 503, even with a body that looks like a price", async () => {
  const errorReply = (msg: Msg) => {
    const h = headers();
    h.set(SERVICE_ERROR_HEADERS.code, "400");
    h.set(SERVICE_ERROR_HEADERS.description, "account_id is required");
    msg.respond(JSON.stringify({ price_cents: 0, tariff_id: 1, lines: [] }), { headers: h });
  };
  await withResponder(errorReply, async () => {
    const error = await refusal("error reply");
    assert.equal(error.statusCode, 503);
    assert.deepEqual(error.messages, ["pricing is temporarily unavailable; retry later"]);
  });
});
