/** The pricing rules at every band and threshold boundary, the minimum, versions by date. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  formatCents,
  type PricedDelivery,
  previewPrice,
  pricedDeliveryOf,
  priceLines,
  quoteDelivery,
  type TariffVersion,
  tariffInForce,
  tariffRuleProblems,
  tariffVersionsOf,
} from "./pricing-rules.ts";
import type { QuoteLine } from "./schemas/pricing.ts";
import type { TariffRules } from "./schemas/tariffs.ts";

const MINUTE = 60_000;
const requestedAt = new Date("2026-11-21T08:00:00.000Z");

const rules: TariffRules = {
  base_cents: { outbound: 1000, inbound: 1200, other: 1500 },
  per_package_cents: 50,
  weight_bands: [
    { from_kg: 10, cents: 300 },
    { from_kg: 30, cents: 900 },
  ],
  volume_bands: [
    { from_dm3: 0, cents: 0 },
    { from_dm3: 100, cents: 400 },
  ],
  slot_surcharges: [
    { shorter_than_minutes: 60, cents: 700 },
    { shorter_than_minutes: 120, cents: 200 },
  ],
  lead_time_surcharges: [
    { shorter_than_minutes: 120, cents: 800 },
    { shorter_than_minutes: 24 * 60, cents: 250 },
  ],
  minimum_cents: 0,
};

/** One dropoff of 2 hours starting a day after the request: no surcharge by default. */
function delivery(overrides: Partial<PricedDelivery> & { slotMinutes?: number; leadMinutes?: number } = {}) {
  const leadMinutes = overrides.leadMinutes ?? 24 * 60;
  const slotMinutes = overrides.slotMinutes ?? 120;
  const startsAt = new Date(requestedAt.getTime() + leadMinutes * MINUTE);
  return {
    direction: overrides.direction ?? "outbound",
    packages: overrides.packages ?? [{ amount: 1, volume_dm3: 10, weight_kg: 2 }],
    slots: overrides.slots ?? [{ startsAt, endsAt: new Date(startsAt.getTime() + slotMinutes * MINUTE) }],
    requestedAt: overrides.requestedAt ?? requestedAt,
  } satisfies PricedDelivery;
}

const line = (lines: QuoteLine[], code: string) => lines.find((l) => l.code === code);
const total = (lines: QuoteLine[]) => lines.reduce((sum, l) => sum + l.amount_cents, 0);

describe("base price and packages", () => {
  test("each direction has its own base price", () => {
    for (const [direction, cents] of [
      ["outbound", 1000],
      ["inbound", 1200],
      ["other", 1500],
    ] as const) {
      assert.deepEqual(line(priceLines(rules, delivery({ direction })), "base"), {
        code: "base",
        label: `Base price (${direction})`,
        amount_cents: cents,
      });
    }
  });

  test("the package component counts amounts, not entries", () => {
    const lines = priceLines(
      rules,
      delivery({
        packages: [
          { amount: 3, volume_dm3: 1, weight_kg: 0.1 },
          { amount: 2, volume_dm3: 1, weight_kg: 0.1 },
        ],
      }),
    );
    assert.deepEqual(line(lines, "packages"), { code: "packages", label: "5 packages × 0.50", amount_cents: 250 });
  });

  test("a tariff of only a base price gives one line", () => {
    const bare: TariffRules = { ...rules, per_package_cents: 0, weight_bands: [], volume_bands: [] };
    const lines = priceLines({ ...bare, slot_surcharges: [], lead_time_surcharges: [] }, delivery());
    assert.deepEqual(lines, [{ code: "base", label: "Base price (outbound)", amount_cents: 1000 }]);
  });
});

describe("weight and volume bands", () => {
  const withWeight = (weight_kg: number, amount = 1) =>
    line(priceLines(rules, delivery({ packages: [{ amount, volume_dm3: 1, weight_kg }] })), "weight_band");

  test("below the first band there is no weight line", () => {
    assert.equal(withWeight(9.999), undefined);
  });
  test("a band starts at its from_kg, inclusive", () => {
    assert.deepEqual(withWeight(10), {
      code: "weight_band",
      label: "Total weight 10 kg (band from 10 kg)",
      amount_cents: 300,
    });
    assert.equal(withWeight(29.999)?.amount_cents, 300);
    assert.equal(withWeight(30)?.amount_cents, 900);
    assert.equal(withWeight(5000)?.amount_cents, 900);
  });
  test("the band applies to the total weight (amount × unit weight)", () => {
    assert.equal(withWeight(5, 2)?.amount_cents, 300);
    assert.equal(withWeight(4.999, 2), undefined);
  });
  test("float sums are rounded to the gram before choosing a band", () => {
    // 3 × 3.3333333 is 9.9999999 in floating point: 10 kg at gram precision.
    assert.equal(withWeight(3.3333333, 3)?.amount_cents, 300);
  });
  test("volume bands work the same way; a band of 0 cents adds no line", () => {
    const withVolume = (volume_dm3: number) =>
      line(priceLines(rules, delivery({ packages: [{ amount: 1, volume_dm3, weight_kg: 1 }] })), "volume_band");
    assert.equal(withVolume(99.999), undefined);
    assert.deepEqual(withVolume(100), {
      code: "volume_band",
      label: "Total volume 100 dm3 (band from 100 dm3)",
      amount_cents: 400,
    });
  });
});

describe("slot surcharge", () => {
  const withSlot = (slotMinutes: number) => line(priceLines(rules, delivery({ slotMinutes })), "slot_surcharge");

  test("a slot exactly at a threshold is not shorter than it", () => {
    assert.equal(withSlot(120), undefined);
    assert.equal(withSlot(60)?.amount_cents, 200);
  });
  test("a slot a moment shorter than a threshold takes the smallest threshold it is under", () => {
    assert.deepEqual(withSlot(120 - 1 / 60), {
      code: "slot_surcharge",
      label: "Slot of 119 min (shorter than 120 min)",
      amount_cents: 200,
    });
    assert.equal(withSlot(60 - 1 / 60)?.amount_cents, 700);
    assert.equal(withSlot(15)?.amount_cents, 700);
  });
  test("the shortest slot of the tasks counts", () => {
    const start = new Date(requestedAt.getTime() + 2 * 24 * 60 * MINUTE);
    const slots = [
      { startsAt: start, endsAt: new Date(start.getTime() + 180 * MINUTE) },
      { startsAt: start, endsAt: new Date(start.getTime() + 45 * MINUTE) },
    ];
    assert.equal(line(priceLines(rules, delivery({ slots })), "slot_surcharge")?.amount_cents, 700);
  });
});

describe("lead-time surcharge", () => {
  const withLead = (leadMinutes: number) => line(priceLines(rules, delivery({ leadMinutes })), "lead_time_surcharge");

  test("lead time exactly at a threshold is not shorter than it", () => {
    assert.equal(withLead(24 * 60), undefined);
    assert.equal(withLead(120)?.amount_cents, 250);
  });
  test("a moment shorter takes the smallest threshold it is under", () => {
    assert.deepEqual(withLead(24 * 60 - 1 / 60), {
      code: "lead_time_surcharge",
      label: "Lead time of 1439 min (shorter than 1440 min)",
      amount_cents: 250,
    });
    assert.equal(withLead(120 - 1 / 60)?.amount_cents, 800);
  });
  test("a slot already started counts as no lead time at all", () => {
    assert.deepEqual(withLead(-30), {
      code: "lead_time_surcharge",
      label: "Lead time of 0 min (shorter than 120 min)",
      amount_cents: 800,
    });
  });
  test("lead time runs to the earliest slot start", () => {
    const near = new Date(requestedAt.getTime() + 90 * MINUTE);
    const far = new Date(requestedAt.getTime() + 3 * 24 * 60 * MINUTE);
    const slots = [
      { startsAt: far, endsAt: new Date(far.getTime() + 120 * MINUTE) },
      { startsAt: near, endsAt: new Date(near.getTime() + 120 * MINUTE) },
    ];
    assert.equal(line(priceLines(rules, delivery({ slots })), "lead_time_surcharge")?.amount_cents, 800);
  });
});

describe("minimum price", () => {
  test("below the minimum, a line makes up the difference", () => {
    const lines = priceLines({ ...rules, minimum_cents: 2000 }, delivery());
    assert.deepEqual(line(lines, "minimum"), { code: "minimum", label: "Minimum price 20.00", amount_cents: 950 });
    assert.equal(total(lines), 2000);
  });
  test("exactly at the minimum, no line", () => {
    const lines = priceLines({ ...rules, minimum_cents: 1050 }, delivery());
    assert.equal(total(lines), 1050);
    assert.equal(line(lines, "minimum"), undefined);
  });
  test("above the minimum, no line", () => {
    assert.equal(line(priceLines({ ...rules, minimum_cents: 1049 }, delivery()), "minimum"), undefined);
  });
});

describe("quotes and tariff versions", () => {
  const version = (id: number, effectiveFrom: string, base: number): TariffVersion => ({
    ...rules,
    base_cents: { outbound: base, inbound: base, other: base },
    id,
    effectiveFrom: new Date(effectiveFrom),
  });
  const versions = [
    version(2, "2026-06-01T00:00:00.000Z", 2000),
    version(1, "2026-01-01T00:00:00.000Z", 1000),
    version(3, "2027-01-01T00:00:00.000Z", 3000),
  ];

  test("no tariff: price null, no tariff id, no lines", () => {
    assert.deepEqual(quoteDelivery([], delivery()), { price_cents: null, tariff_id: null, lines: [] });
  });
  test("before the first version came into force: null", () => {
    const at = new Date("2025-12-31T23:59:59.999Z");
    assert.equal(tariffInForce(versions, at), null);
    assert.deepEqual(quoteDelivery(versions, delivery({ requestedAt: at, leadMinutes: 0 })).price_cents, null);
  });
  test("a version applies from its effective_from, inclusive, until the next one", () => {
    assert.equal(tariffInForce(versions, new Date("2026-01-01T00:00:00.000Z"))?.id, 1);
    assert.equal(tariffInForce(versions, new Date("2026-05-31T23:59:59.999Z"))?.id, 1);
    assert.equal(tariffInForce(versions, new Date("2026-06-01T00:00:00.000Z"))?.id, 2);
    assert.equal(tariffInForce(versions, new Date("2030-01-01T00:00:00.000Z"))?.id, 3);
  });
  test("the quote names the version used and its lines add up to the price", () => {
    const at = new Date("2026-11-21T08:00:00.000Z");
    const reply = quoteDelivery(versions, delivery({ requestedAt: at, slotMinutes: 30, leadMinutes: 60 }));
    assert.equal(reply.tariff_id, 2);
    assert.deepEqual(
      reply.lines.map((l) => [l.code, l.amount_cents]),
      [
        ["base", 2000],
        ["packages", 50],
        ["slot_surcharge", 700],
        ["lead_time_surcharge", 800],
      ],
    );
    assert.equal(reply.price_cents, 3550);
  });
});

test("formatCents shows cents as a decimal amount", () => {
  assert.equal(formatCents(0), "0.00");
  assert.equal(formatCents(5), "0.05");
  assert.equal(formatCents(1234), "12.34");
});

test("the README's worked example", () => {
  const tariff: TariffRules = {
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
  };
  const packages = [
    { amount: 2, volume_dm3: 30, weight_kg: 6 },
    { amount: 1, volume_dm3: 12, weight_kg: 1.5 },
  ];
  const at = (time: string) => new Date(`2026-11-21T${time}:00.000Z`);
  const reply = quoteDelivery([{ ...tariff, id: 12, effectiveFrom: new Date("2026-11-01T00:00:00.000Z") }], {
    direction: "outbound",
    packages,
    slots: [{ startsAt: at("14:00"), endsAt: at("14:45") }],
    requestedAt: at("09:00"),
  });
  assert.deepEqual(reply, {
    price_cents: 2250,
    tariff_id: 12,
    lines: [
      { code: "base", label: "Base price (outbound)", amount_cents: 900 },
      { code: "packages", label: "3 packages × 1.00", amount_cents: 300 },
      { code: "weight_band", label: "Total weight 13.5 kg (band from 10 kg)", amount_cents: 250 },
      { code: "slot_surcharge", label: "Slot of 45 min (shorter than 60 min)", amount_cents: 500 },
      { code: "lead_time_surcharge", label: "Lead time of 300 min (shorter than 1440 min)", amount_cents: 300 },
    ],
  });
  const relaxed = priceLines(tariff, {
    direction: "outbound",
    packages,
    slots: [
      {
        startsAt: new Date(at("14:00").getTime() + 2 * 24 * 60 * MINUTE),
        endsAt: new Date(at("16:00").getTime() + 2 * 24 * 60 * MINUTE),
      },
    ],
    requestedAt: at("09:00"),
  });
  assert.equal(total(relaxed), 1450);
});

describe("a quote request and a bucket entry as the rules read them", () => {
  const request = {
    account_id: 7,
    direction: "outbound" as const,
    tasks: [
      {
        kind: "dropoff" as const,
        slot_starting_at: "2026-11-21T14:00:00+01:00",
        slot_ending_at: "2026-11-21T14:45:00.000Z",
      },
    ],
    packages: [{ amount: 2, volume_dm3: 30, weight_kg: 6 }],
    requested_at: "2026-11-21T09:00:00.000+00:00",
  };

  test("timestamps with any offset become instants", () => {
    const read = pricedDeliveryOf(request);
    assert.ok(read.ok);
    assert.equal(read.delivery.requestedAt.toISOString(), "2026-11-21T09:00:00.000Z");
    assert.deepEqual(read.delivery.slots, [
      { startsAt: new Date("2026-11-21T13:00:00.000Z"), endsAt: new Date("2026-11-21T14:45:00.000Z") },
    ]);
  });

  test("an impossible date and a slot that does not end after its start are refused, by field", () => {
    assert.deepEqual(pricedDeliveryOf({ ...request, requested_at: "2026-02-30T09:00:00Z" }), {
      ok: false,
      errors: ["requested_at is not a real date and time"],
    });
    const backwards = [
      { kind: "dropoff" as const, slot_starting_at: "2026-11-21T15:00:00Z", slot_ending_at: "2026-11-21T15:00:00Z" },
    ];
    assert.deepEqual(pricedDeliveryOf({ ...request, tasks: backwards }), {
      ok: false,
      errors: ["tasks[0].slot_ending_at must be after slot_starting_at"],
    });
  });

  test("a TARIFFS entry prices exactly as the versions it was written from", () => {
    const versions: TariffVersion[] = [
      { ...rules, id: 3, effectiveFrom: new Date("2026-11-01T00:00:00.000Z") },
      {
        ...rules,
        id: 4,
        base_cents: { outbound: 2000, inbound: 1, other: 1 },
        effectiveFrom: new Date("2026-11-21T08:30:00.000Z"),
      },
    ];
    const entry = {
      account_id: 7,
      versions: versions.map(({ effectiveFrom, ...v }) => ({ ...v, effective_from: effectiveFrom.toISOString() })),
    };
    const read = pricedDeliveryOf(request);
    assert.ok(read.ok);
    const fromEntry = quoteDelivery(tariffVersionsOf(entry), read.delivery);
    assert.equal(fromEntry.tariff_id, 4);
    assert.deepEqual(fromEntry, quoteDelivery(versions, read.delivery));
  });
});

describe("a draft tariff (the operator's preview)", () => {
  test("a sample is priced with the lines a quote of the same delivery would have", () => {
    const sample = {
      direction: "outbound" as const,
      packages: [{ amount: 2, volume_dm3: 30, weight_kg: 6 }],
      slot_minutes: 45,
      lead_time_minutes: 300,
    };
    const start = new Date(requestedAt.getTime() + 300 * MINUTE);
    const quoted = priceLines(rules, {
      direction: "outbound",
      packages: sample.packages,
      slots: [{ startsAt: start, endsAt: new Date(start.getTime() + 45 * MINUTE) }],
      requestedAt,
    });
    const preview = previewPrice(rules, sample);
    assert.deepEqual(preview.lines, quoted);
    assert.deepEqual(
      preview.lines.map((line) => line.label),
      [
        "Base price (outbound)",
        "2 packages × 0.50",
        "Total weight 12 kg (band from 10 kg)",
        "Slot of 45 min (shorter than 60 min)",
        "Lead time of 300 min (shorter than 1440 min)",
      ],
    );
    assert.equal(preview.price_cents, 1000 + 100 + 300 + 700 + 250);
  });

  test("bands and thresholds must be strictly ascending, each problem named", () => {
    assert.deepEqual(tariffRuleProblems(rules), []);
    assert.deepEqual(
      tariffRuleProblems({
        ...rules,
        weight_bands: [
          { from_kg: 10, cents: 1 },
          { from_kg: 10, cents: 2 },
        ],
        slot_surcharges: [
          { shorter_than_minutes: 120, cents: 1 },
          { shorter_than_minutes: 60, cents: 2 },
        ],
      }),
      [
        "weight_bands[1].from_kg must be greater than weight_bands[0].from_kg (10)",
        "slot_surcharges[1].shorter_than_minutes must be greater than slot_surcharges[0].shorter_than_minutes (120)",
      ],
    );
  });
});
