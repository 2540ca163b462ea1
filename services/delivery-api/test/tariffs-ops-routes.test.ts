/**
 * The operator tariff routes over real NATS, against raw responders standing in for pricing
 * on the tariff subjects: bodies are checked before they leave, pricing's refusals keep their
 * status, and pricing absent or off-contract is a 503 with Retry-After.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { natsNames, SERVICE_ERROR_HEADERS, type Tariff } from "@dos/contracts";
import { connectNats, createHttpApp, createLifecycle, createLogger, type NatsHandle } from "@dos/service-kit";
import { randomNamespace, testInfra } from "@dos/service-kit/testing";
import { headers, type Msg } from "@nats-io/nats-core";
import type { FastifyInstance } from "fastify";
import { tariffsOpsRoutes } from "../src/tariffs/tariffs.ops-routes.ts";

const KNOWN_ACCOUNT = 5;
const names = natsNames(randomNamespace());
let app: FastifyInstance;
let nats: NatsHandle;
let pricing: NatsHandle;

before(async () => {
  const logger = createLogger("tariffs-ops-test", process.env.TEST_LOG_LEVEL ?? "silent");
  nats = await connectNats(testInfra().natsUrl, "tariffs-ops-test", logger);
  pricing = await connectNats(testInfra().natsUrl, "tariffs-ops-test-pricing", logger);
  ({ app } = createHttpApp({ service: "delivery-api", logger, lifecycle: createLifecycle(logger), checks: {} }));
  await app.register(tariffsOpsRoutes, {
    prefix: "/ops/v1",
    nc: nats.nc,
    namespace: names.namespace,
    timeoutMs: 300,
    accountExists: async (accountId) => accountId === KNOWN_ACCOUNT,
  });
  await app.ready();
});
after(async () => {
  await app.close();
  await pricing.drain();
  await nats.drain();
});

const tariffBody = { base_cents: { outbound: 900, inbound: 1000, other: 1200 }, minimum_cents: 500 };
const storedTariff = (request: Record<string, unknown>): Tariff => ({
  id: 11,
  account_id: request.account_id as number,
  effective_from: "2030-01-01T00:00:00.000+00:00",
  base_cents: request.base_cents as Tariff["base_cents"],
  per_package_cents: request.per_package_cents as number,
  weight_bands: [],
  volume_bands: [],
  slot_surcharges: [],
  lead_time_surcharges: [],
  minimum_cents: request.minimum_cents as number,
  note: null,
  created_at: "2029-12-31T00:00:00.000+00:00",
});

/** Stands in for pricing on one subject while `run` runs; returns what it was asked. */
async function asPricing(subject: string, answer: (msg: Msg) => void, run: () => Promise<void>) {
  const asked: unknown[] = [];
  const sub = pricing.nc.subscribe(subject, {
    callback: (_error, msg) => {
      asked.push(msg.json());
      answer(msg);
    },
  });
  await pricing.nc.flush();
  try {
    await run();
  } finally {
    sub.unsubscribe();
    await pricing.nc.flush();
  }
  return asked;
}
const refuseWith = (code: number, errors: string[]) => (msg: Msg) => {
  const h = headers();
  h.set(SERVICE_ERROR_HEADERS.code, String(code));
  h.set(SERVICE_ERROR_HEADERS.description, errors.join("; "));
  msg.respond(JSON.stringify({ errors }), { headers: h });
};
const post = (accountId: number | string, payload: unknown) =>
  app.inject({ method: "POST", url: `/ops/v1/accounts/${accountId}/tariffs`, payload: payload as object });

test("POST forwards the new version with its account and answers 201 with pricing's tariff", async () => {
  let response: Awaited<ReturnType<typeof post>> | undefined;
  const asked = await asPricing(
    names.subjects.pricingTariffsCreate,
    (msg) => msg.respond(JSON.stringify(storedTariff(msg.json()))),
    async () => {
      response = await post(KNOWN_ACCOUNT, tariffBody);
    },
  );
  assert.equal(response?.statusCode, 201);
  assert.deepEqual(response?.json(), storedTariff({ ...tariffBody, account_id: KNOWN_ACCOUNT, per_package_cents: 0 }));
  assert.deepEqual(asked, [
    {
      ...tariffBody,
      account_id: KNOWN_ACCOUNT,
      per_package_cents: 0,
      weight_bands: [],
      volume_bands: [],
      slot_surcharges: [],
      lead_time_surcharges: [],
    },
  ]);
});

test("a body off the schema is a 422 and never reaches pricing", async () => {
  const asked = await asPricing(
    names.subjects.pricingTariffsCreate,
    () => assert.fail("pricing was asked"),
    async () => {
      const response = await post(KNOWN_ACCOUNT, { base_cents: { outbound: 1, inbound: 1 }, minimum_cents: -1 });
      assert.equal(response.statusCode, 422);
      assert.deepEqual(response.json(), {
        errors: ["base_cents.other is required", "minimum_cents must be at least 0"],
      });
    },
  );
  assert.deepEqual(asked, []);
});

test("pricing's refusals keep their status and messages", async () => {
  for (const [code, errors] of [
    [422, ["effective_from must not be in the past"]],
    [409, ["effective_from 2030-01-01T00:00:00.000+00:00 already starts another tariff version of this account"]],
  ] as const) {
    await asPricing(names.subjects.pricingTariffsCreate, refuseWith(code, [...errors]), async () => {
      const response = await post(KNOWN_ACCOUNT, tariffBody);
      assert.equal(response.statusCode, code);
      assert.deepEqual(response.json(), { errors });
    });
  }
});

test("GET lists the account's versions as pricing returns them", async () => {
  const tariff = storedTariff({ ...tariffBody, account_id: KNOWN_ACCOUNT, per_package_cents: 0 });
  await asPricing(
    names.subjects.pricingTariffsList,
    (msg) => msg.respond(JSON.stringify({ tariffs: [tariff] })),
    async () => {
      const response = await app.inject({ method: "GET", url: `/ops/v1/accounts/${KNOWN_ACCOUNT}/tariffs` });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), [tariff]);
    },
  );
});

test("an unknown account is a 404 without asking pricing", async () => {
  for (const id of ["6", "abc"]) {
    const response = await app.inject({ method: "GET", url: `/ops/v1/accounts/${id}/tariffs` });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(response.json(), { errors: [`account ${id} not found`] });
  }
});

test("pricing absent, silent, failing or off-contract is a 503 with Retry-After", async () => {
  const unavailable = async (expected: string) => {
    const response = await app.inject({ method: "GET", url: `/ops/v1/accounts/${KNOWN_ACCOUNT}/tariffs` });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers["retry-after"], "5");
    assert.deepEqual(response.json(), { errors: [expected] });
  };
  const retry = "pricing is temporarily unavailable; retry later";
  await unavailable(retry);
  const subject = names.subjects.pricingTariffsList;
  await asPricing(
    subject,
    () => {},
    () => unavailable("pricing did not answer within 300 ms; retry later"),
  );
  await asPricing(subject, refuseWith(503, ["pricing storage is temporarily unavailable"]), () => unavailable(retry));
  await asPricing(
    subject,
    (msg) => msg.respond(JSON.stringify({ tariffs: [{ id: 1 }] })),
    () => unavailable(retry),
  );
});

describe("the preview of a draft tariff", () => {
  /** The pricing README's worked example: a tariff, and a delivery priced 22.50 under it. */
  const draft = {
    base_cents: { outbound: 900, inbound: 1100, other: 1400 },
    per_package_cents: 100,
    weight_bands: [
      { from_kg: 10, cents: 250 },
      { from_kg: 30, cents: 800 },
    ],
    volume_bands: [{ from_dm3: 100, cents: 300 }],
    slot_surcharges: [
      { shorter_than_minutes: 60, cents: 500 },
      { shorter_than_minutes: 120, cents: 200 },
    ],
    lead_time_surcharges: [
      { shorter_than_minutes: 240, cents: 600 },
      { shorter_than_minutes: 1440, cents: 300 },
    ],
    minimum_cents: 1000,
    note: "draft",
  };
  const sample = {
    direction: "outbound",
    packages: [
      { amount: 2, volume_dm3: 30, weight_kg: 6 },
      { amount: 1, volume_dm3: 12, weight_kg: 1.5 },
    ],
    slot_minutes: 45,
    lead_time_minutes: 300,
  };
  const preview = (accountId: number | string, payload: unknown) =>
    app.inject({ method: "POST", url: `/ops/v1/accounts/${accountId}/tariffs/preview`, payload: payload as object });
  /** Runs `run` while every pricing subject is watched: the preview must ask pricing nothing. */
  const withoutPricing = (run: () => Promise<void>) =>
    asPricing(`${names.subjects.pricingTariffs}.>`, () => assert.fail("pricing was asked"), run).then((asked) =>
      assert.deepEqual(asked, []),
    );

  test("prices the sample under the draft, line by line, and stores nothing", async () => {
    await withoutPricing(async () => {
      const response = await preview(KNOWN_ACCOUNT, { ...draft, sample });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), {
        price_cents: 2250,
        lines: [
          { code: "base", label: "Base price (outbound)", amount_cents: 900 },
          { code: "packages", label: "3 packages × 1.00", amount_cents: 300 },
          { code: "weight_band", label: "Total weight 13.5 kg (band from 10 kg)", amount_cents: 250 },
          { code: "slot_surcharge", label: "Slot of 45 min (shorter than 60 min)", amount_cents: 500 },
          { code: "lead_time_surcharge", label: "Lead time of 300 min (shorter than 1440 min)", amount_cents: 300 },
        ],
      });
      // Two days ahead with a 2-hour slot, as the README says: 14.50; the minimum tops a small one up.
      const relaxed = await preview(KNOWN_ACCOUNT, {
        ...draft,
        sample: { ...sample, slot_minutes: 120, lead_time_minutes: 2880 },
      });
      assert.equal(relaxed.json().price_cents, 1450);
      const small = await preview(KNOWN_ACCOUNT, {
        base_cents: { outbound: 400, inbound: 400, other: 400 },
        minimum_cents: 1000,
        sample: { ...sample, packages: [{ amount: 1, volume_dm3: 1, weight_kg: 1 }] },
      });
      assert.deepEqual(small.json().lines.at(-1), { code: "minimum", label: "Minimum price 10.00", amount_cents: 600 });
    });
  });

  test("a draft pricing would refuse is a 422 with pricing's messages; a bad sample names its field", async () => {
    await withoutPricing(async () => {
      const unordered = await preview(KNOWN_ACCOUNT, {
        ...draft,
        weight_bands: [
          { from_kg: 30, cents: 800 },
          { from_kg: 10, cents: 250 },
        ],
        sample,
      });
      assert.equal(unordered.statusCode, 422);
      assert.deepEqual(unordered.json(), {
        errors: ["weight_bands[1].from_kg must be greater than weight_bands[0].from_kg (30)"],
      });
      const bad = await preview(KNOWN_ACCOUNT, {
        ...draft,
        per_package_cents: -1,
        sample: { ...sample, slot_minutes: 0, packages: [] },
      });
      assert.equal(bad.statusCode, 422);
      assert.deepEqual(
        new Set(bad.json().errors),
        new Set([
          "per_package_cents must be at least 0",
          "sample.packages must have at least 1 entry",
          "sample.slot_minutes must be at least 1",
        ]),
      );
      const none = await preview(KNOWN_ACCOUNT, draft);
      assert.deepEqual(none.json(), { errors: ["sample is required"] });
    });
  });

  test("an unknown account is a 404", async () => {
    const response = await preview(6, { ...draft, sample });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(response.json(), { errors: ["account 6 not found"] });
  });
});
