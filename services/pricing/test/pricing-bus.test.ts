/**
 * pricing over real NATS and PostgreSQL: two replicas on one namespace share the quotes, a
 * tariff stored over the bus is used by both at once, versions apply by date, and a request
 * that breaks the contract gets a services error reply, never a price.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  formatTimestamp,
  type QuoteReply,
  type QuoteRequest,
  SERVICE_ERROR_HEADERS,
  type Tariff,
  type TariffListReply,
} from "@dos/contracts";
import type { Msg } from "@nats-io/nats-core";
import { Svcm } from "@nats-io/services";
import { createPricingHarness, type PricingHarness, type Replica } from "./pricing-harness.ts";

let harness: PricingHarness;
let replicas: Replica[];

before(async () => {
  harness = await createPricingHarness("pricing_bus");
  replicas = [await harness.startReplica(), await harness.startReplica()];
});
after(async () => {
  await harness.close();
});

const HOUR = 3_600_000;
const at = (offsetMs: number) => formatTimestamp(new Date(Date.now() + offsetMs));

async function ask(subject: string, body: unknown): Promise<Msg> {
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  return harness.client.nc.request(subject, payload, { timeout: 5000 });
}
function errorOf(msg: Msg) {
  return {
    code: msg.headers?.get(SERVICE_ERROR_HEADERS.code),
    description: msg.headers?.get(SERVICE_ERROR_HEADERS.description),
    body: msg.json<unknown>(),
  };
}
const quoteSubject = () => harness.names.services.pricing.quoteSubject;

function quoteRequest(accountId: number, requestedAtOffsetMs = 0): QuoteRequest {
  const requestedAt = Date.now() + requestedAtOffsetMs;
  return {
    account_id: accountId,
    direction: "outbound",
    tasks: [
      {
        kind: "dropoff",
        slot_starting_at: formatTimestamp(new Date(requestedAt + 48 * HOUR)),
        slot_ending_at: formatTimestamp(new Date(requestedAt + 50 * HOUR)),
      },
    ],
    packages: [{ amount: 2, volume_dm3: 20, weight_kg: 6 }],
    requested_at: formatTimestamp(new Date(requestedAt)),
  };
}
async function quote(request: QuoteRequest): Promise<QuoteReply> {
  const msg = await ask(quoteSubject(), request);
  assert.equal(msg.headers?.get(SERVICE_ERROR_HEADERS.code) ?? "", "", "quote answered with an error");
  return msg.json<QuoteReply>();
}
async function createTariff(body: Record<string, unknown>): Promise<Tariff> {
  const msg = await ask(harness.names.subjects.pricingTariffsCreate, body);
  assert.equal(msg.headers?.get(SERVICE_ERROR_HEADERS.code) ?? "", "", msg.string());
  return msg.json<Tariff>();
}
async function quotesAnsweredBy(replica: Replica): Promise<number> {
  const response = await replica.built.app.inject({ method: "GET", url: "/metrics" });
  const counts = [...response.body.matchAll(/^pricing_quotes_total\{[^}]*\} (\d+)$/gm)];
  return counts.reduce((sum, match) => sum + Number(match[1]), 0);
}

describe("quotes", () => {
  test("an account without a tariff is quoted null, with no lines", async () => {
    assert.deepEqual(await quote(quoteRequest(1)), { price_cents: null, tariff_id: null, lines: [] });
  });

  test("both replicas are discoverable and share the quotes through the queue group", async () => {
    const pings = await new Svcm(harness.client.nc as never).client().ping(harness.names.services.pricing.name);
    const ids = new Set<string>();
    for await (const ping of pings) ids.add(ping.id);
    assert.equal(ids.size, 2);

    const before = await Promise.all(replicas.map(quotesAnsweredBy));
    await Promise.all(Array.from({ length: 60 }, () => quote(quoteRequest(1))));
    const answered = (await Promise.all(replicas.map(quotesAnsweredBy))).map((n, i) => n - (before[i] ?? 0));
    assert.equal(
      answered.reduce((a, b) => a + b, 0),
      60,
    );
    assert.ok(
      answered.every((n) => n > 0),
      `each replica answers some quotes: ${answered.join(" / ")}`,
    );
  });

  test("a tariff stored over the bus prices quotes on every replica, itemised", async () => {
    // Both replicas have cached "no tariff" for account 7 before the tariff exists.
    await Promise.all(Array.from({ length: 20 }, () => quote(quoteRequest(7))));
    const tariff = await createTariff({
      account_id: 7,
      base_cents: { outbound: 900, inbound: 1100, other: 1400 },
      per_package_cents: 100,
      weight_bands: [{ from_kg: 10, cents: 250 }],
      slot_surcharges: [{ shorter_than_minutes: 180, cents: 300 }],
      minimum_cents: 500,
    });
    assert.equal(tariff.account_id, 7);
    assert.equal(tariff.note, null);
    assert.deepEqual(tariff.volume_bands, []);

    const replies = await Promise.all(Array.from({ length: 20 }, () => quote(quoteRequest(7))));
    for (const reply of replies) {
      assert.deepEqual(reply, {
        price_cents: 1650,
        tariff_id: tariff.id,
        lines: [
          { code: "base", label: "Base price (outbound)", amount_cents: 900 },
          { code: "packages", label: "2 packages × 1.00", amount_cents: 200 },
          { code: "weight_band", label: "Total weight 12 kg (band from 10 kg)", amount_cents: 250 },
          { code: "slot_surcharge", label: "Slot of 120 min (shorter than 180 min)", amount_cents: 300 },
        ],
      });
    }
  });

  test("a later version applies from its effective_from; earlier requests keep the old one", async () => {
    const first = await createTariff({ account_id: 8, base_cents: { outbound: 1000, inbound: 1000, other: 1000 } });
    await Promise.all(Array.from({ length: 10 }, () => quote(quoteRequest(8, 2 * HOUR))));
    const second = await createTariff({
      account_id: 8,
      effective_from: at(HOUR),
      base_cents: { outbound: 2000, inbound: 2000, other: 2000 },
    });
    const now = await Promise.all(Array.from({ length: 10 }, () => quote(quoteRequest(8))));
    const later = await Promise.all(Array.from({ length: 10 }, () => quote(quoteRequest(8, 2 * HOUR))));
    assert.deepEqual(new Set(now.map((r) => `${r.tariff_id}:${r.price_cents}`)), new Set([`${first.id}:1000`]));
    assert.deepEqual(new Set(later.map((r) => `${r.tariff_id}:${r.price_cents}`)), new Set([`${second.id}:2000`]));
  });

  test("a malformed quote request gets an error reply, never a price", async () => {
    const cases: Array<[unknown, string[]]> = [
      ["{not json", ["body is not valid JSON"]],
      [{ ...quoteRequest(1), account_id: undefined }, ["account_id is required"]],
      [{ ...quoteRequest(1), packages: [] }, ["packages must have at least 1 entry"]],
      [
        { ...quoteRequest(1), requested_at: "2026-02-30T10:00:00.000+00:00" },
        ["requested_at is not a real date and time"],
      ],
      [
        {
          ...quoteRequest(1),
          tasks: [
            {
              kind: "dropoff",
              slot_starting_at: "2030-01-01T10:00:00.000+00:00",
              slot_ending_at: "2030-01-01T10:00:00.000+00:00",
            },
          ],
        },
        ["tasks[0].slot_ending_at must be after slot_starting_at"],
      ],
    ];
    for (const [body, errors] of cases) {
      const reply = errorOf(await ask(quoteSubject(), body));
      assert.deepEqual(reply, { code: "400", description: errors.join("; "), body: { errors } });
    }
  });
});

describe("tariff management", () => {
  test("lists an account's versions, latest first, and reads one", async () => {
    const list = (await ask(harness.names.subjects.pricingTariffsList, { account_id: 8 })).json<TariffListReply>();
    assert.deepEqual(
      list.tariffs.map((t) => t.base_cents.outbound),
      [2000, 1000],
    );
    const [latest] = list.tariffs;
    const got = await ask(harness.names.subjects.pricingTariffsGet, { account_id: 8, tariff_id: latest?.id });
    assert.deepEqual(got.json(), latest);
    const empty = await ask(harness.names.subjects.pricingTariffsList, { account_id: 999 });
    assert.deepEqual(empty.json(), { tariffs: [] });
  });

  test("an unknown version, or another account's, is a 404 error reply", async () => {
    const [tariff] = (await ask(harness.names.subjects.pricingTariffsList, { account_id: 8 })).json<TariffListReply>()
      .tariffs;
    for (const body of [
      { account_id: 8, tariff_id: 999_999 },
      { account_id: 9, tariff_id: tariff?.id },
    ]) {
      const reply = errorOf(await ask(harness.names.subjects.pricingTariffsGet, body));
      assert.deepEqual(reply, {
        code: "404",
        description: `tariff ${body.tariff_id} not found`,
        body: { errors: [`tariff ${body.tariff_id} not found`] },
      });
    }
  });

  test("refuses unordered bands, a start in the past, a duplicate start and unknown fields", async () => {
    const base = { account_id: 10, base_cents: { outbound: 1, inbound: 1, other: 1 } };
    const refused = async (body: unknown) => errorOf(await ask(harness.names.subjects.pricingTariffsCreate, body));

    assert.deepEqual(
      await refused({
        ...base,
        weight_bands: [
          { from_kg: 10, cents: 1 },
          { from_kg: 10, cents: 2 },
        ],
        lead_time_surcharges: [
          { shorter_than_minutes: 120, cents: 1 },
          { shorter_than_minutes: 60, cents: 2 },
        ],
      }),
      {
        code: "422",
        description:
          "weight_bands[1].from_kg must be greater than weight_bands[0].from_kg (10); lead_time_surcharges[1].shorter_than_minutes must be greater than lead_time_surcharges[0].shorter_than_minutes (120)",
        body: {
          errors: [
            "weight_bands[1].from_kg must be greater than weight_bands[0].from_kg (10)",
            "lead_time_surcharges[1].shorter_than_minutes must be greater than lead_time_surcharges[0].shorter_than_minutes (120)",
          ],
        },
      },
    );
    assert.deepEqual((await refused({ ...base, effective_from: at(-HOUR) })).body, {
      errors: ["effective_from must not be in the past"],
    });
    const start = at(3 * HOUR);
    await createTariff({ ...base, effective_from: start });
    assert.deepEqual(await refused({ ...base, effective_from: start }), {
      code: "409",
      description: `effective_from ${start} already starts another tariff version of this account`,
      body: { errors: [`effective_from ${start} already starts another tariff version of this account`] },
    });
    assert.deepEqual((await refused({ ...base, discount: 5 })).body, { errors: ["discount is not a known field"] });
    assert.equal(
      (await ask(harness.names.subjects.pricingTariffsList, { account_id: 10 })).json<TariffListReply>().tariffs.length,
      1,
    );
  });
});

describe("a replica going away", () => {
  test("is not ready once its endpoints stop, and the other replica answers every quote", async () => {
    const [staying, leaving] = replicas as [Replica, Replica];
    const ready = await leaving.built.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().checks.quote_endpoint, "ok");

    await leaving.built.stop?.();
    const notReady = await leaving.built.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(notReady.statusCode, 503);
    assert.deepEqual(notReady.json().errors, ["quote_endpoint is unreachable: not serving quotes"]);

    const before = await quotesAnsweredBy(staying);
    const replies = await Promise.all(Array.from({ length: 20 }, () => quote(quoteRequest(7))));
    assert.ok(replies.every((reply) => reply.price_cents === 1650));
    assert.equal((await quotesAnsweredBy(staying)) - before, 20);
  });
});
