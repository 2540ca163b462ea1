/**
 * The pricing rules, pure: which tariff version is in force, and how a tariff prices a
 * delivery, line by line. No I/O here, so every band and threshold is unit-tested. The one
 * definition of a price: the pricing service quotes with it, and delivery-api with its replica
 * of the TARIFFS bucket while NATS is down, so both give the same price by construction.
 *
 * - base: the tariff's price for the delivery's direction (always a line, even at 0);
 * - packages: per_package_cents × the number of packages (sum of amounts);
 * - weight / volume: the band whose `from_*` is the greatest at or below the delivery's total
 *   (totals rounded to 3 decimals, so 3 × 3.3 kg is 9.9 kg, not 9.899999);
 * - slot / lead time: the smallest threshold the duration is strictly shorter than;
 * - minimum: when the sum is below minimum_cents, a line makes up the difference.
 * Lines of 0 cents (other than base) are left out; the lines always add up to the price.
 */
import type { Direction } from "./schemas/delivery.ts";
import type { QuoteLine, QuoteReply, QuoteRequest } from "./schemas/pricing.ts";
import type { AccountTariffs, TariffPreview, TariffPreviewInput, TariffRules } from "./schemas/tariffs.ts";
import { parseTimestamp } from "./timestamps.ts";

/** A stored tariff version as the rules need it. */
export interface TariffVersion extends TariffRules {
  id: number;
  effectiveFrom: Date;
}

/** A delivery to price, already parsed and checked (see pricedDeliveryOf). */
export interface PricedDelivery {
  direction: Direction;
  packages: ReadonlyArray<{ amount: number; volume_dm3: number; weight_kg: number }>;
  slots: ReadonlyArray<{ startsAt: Date; endsAt: Date }>;
  requestedAt: Date;
}

const MINUTE_MS = 60_000;

/**
 * A QuoteRequest (already valid against its schema) as the rules need it, or what a schema
 * cannot say is wrong with it: a date that is not on the calendar, a slot that does not end
 * after it starts.
 */
export function pricedDeliveryOf(
  request: QuoteRequest,
): { ok: true; delivery: PricedDelivery } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const instant = (text: string, label: string) => {
    const date = parseTimestamp(text);
    if (!date) errors.push(`${label} is not a real date and time`);
    return date ?? new Date(0);
  };
  const requestedAt = instant(request.requested_at, "requested_at");
  const slots = request.tasks.map((task, index) => {
    const startsAt = instant(task.slot_starting_at, `tasks[${index}].slot_starting_at`);
    const endsAt = instant(task.slot_ending_at, `tasks[${index}].slot_ending_at`);
    if (errors.length === 0 && endsAt.getTime() <= startsAt.getTime()) {
      errors.push(`tasks[${index}].slot_ending_at must be after slot_starting_at`);
    }
    return { startsAt, endsAt };
  });
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, delivery: { direction: request.direction, packages: request.packages, slots, requestedAt } };
}

/** An account's entry of the TARIFFS bucket as the rules need it. */
export function tariffVersionsOf(entry: AccountTariffs): TariffVersion[] {
  return entry.versions.map(({ effective_from, ...version }) => ({
    ...version,
    effectiveFrom: new Date(effective_from),
  }));
}

/** The version with the latest effective_from at or before `at`; null when none was in force yet. */
export function tariffInForce(versions: readonly TariffVersion[], at: Date): TariffVersion | null {
  let found: TariffVersion | null = null;
  for (const version of versions) {
    if (version.effectiveFrom.getTime() > at.getTime()) continue;
    if (!found || version.effectiveFrom.getTime() > found.effectiveFrom.getTime()) found = version;
  }
  return found;
}

/** The quote of a delivery under an account's tariff versions: null price when none is in force. */
export function quoteDelivery(versions: readonly TariffVersion[], delivery: PricedDelivery): QuoteReply {
  const tariff = tariffInForce(versions, delivery.requestedAt);
  if (!tariff) return { price_cents: null, tariff_id: null, lines: [] };
  const lines = priceLines(tariff, delivery);
  return { price_cents: sumLines(lines), tariff_id: tariff.id, lines };
}

/**
 * The price of the operator's sample delivery under a draft tariff, as if the draft were in
 * force: requested at an arbitrary fixed instant, its slot starting lead_time_minutes later and
 * lasting slot_minutes, so the lines name exactly the sample's figures.
 */
export function previewPrice(tariff: TariffRules, sample: TariffPreviewInput["sample"]): TariffPreview {
  const requestedAt = new Date(0);
  const startsAt = new Date(sample.lead_time_minutes * MINUTE_MS);
  const endsAt = new Date(startsAt.getTime() + sample.slot_minutes * MINUTE_MS);
  const lines = priceLines(tariff, {
    direction: sample.direction,
    packages: sample.packages,
    slots: [{ startsAt, endsAt }],
    requestedAt,
  });
  return { price_cents: sumLines(lines), lines };
}

/** The itemised price of a delivery under one tariff. */
export function priceLines(tariff: TariffRules, delivery: PricedDelivery): QuoteLine[] {
  const base = tariff.base_cents[delivery.direction];
  const lines: QuoteLine[] = [{ code: "base", label: `Base price (${delivery.direction})`, amount_cents: base }];
  const add = (line: QuoteLine) => {
    if (line.amount_cents !== 0) lines.push(line);
  };

  const count = delivery.packages.reduce((sum, p) => sum + p.amount, 0);
  add({
    code: "packages",
    label: `${count} ${count === 1 ? "package" : "packages"} × ${formatCents(tariff.per_package_cents)}`,
    amount_cents: count * tariff.per_package_cents,
  });

  const weight = roundQuantity(delivery.packages.reduce((sum, p) => sum + p.amount * p.weight_kg, 0));
  const weightBand = bandFor(tariff.weight_bands, (b) => b.from_kg, weight);
  if (weightBand) {
    add({
      code: "weight_band",
      label: `Total weight ${weight} kg (band from ${weightBand.from_kg} kg)`,
      amount_cents: weightBand.cents,
    });
  }

  const volume = roundQuantity(delivery.packages.reduce((sum, p) => sum + p.amount * p.volume_dm3, 0));
  const volumeBand = bandFor(tariff.volume_bands, (b) => b.from_dm3, volume);
  if (volumeBand) {
    add({
      code: "volume_band",
      label: `Total volume ${volume} dm3 (band from ${volumeBand.from_dm3} dm3)`,
      amount_cents: volumeBand.cents,
    });
  }

  const shortestSlotMs = Math.min(...delivery.slots.map((s) => s.endsAt.getTime() - s.startsAt.getTime()));
  const slotSurcharge = thresholdFor(tariff.slot_surcharges, shortestSlotMs);
  if (slotSurcharge) {
    add({
      code: "slot_surcharge",
      label: `Slot of ${wholeMinutes(shortestSlotMs)} min (shorter than ${slotSurcharge.shorter_than_minutes} min)`,
      amount_cents: slotSurcharge.cents,
    });
  }

  const earliestStart = Math.min(...delivery.slots.map((s) => s.startsAt.getTime()));
  const leadTimeMs = earliestStart - delivery.requestedAt.getTime();
  const leadSurcharge = thresholdFor(tariff.lead_time_surcharges, leadTimeMs);
  if (leadSurcharge) {
    add({
      code: "lead_time_surcharge",
      label: `Lead time of ${wholeMinutes(leadTimeMs)} min (shorter than ${leadSurcharge.shorter_than_minutes} min)`,
      amount_cents: leadSurcharge.cents,
    });
  }

  const subtotal = sumLines(lines);
  if (subtotal < tariff.minimum_cents) {
    lines.push({
      code: "minimum",
      label: `Minimum price ${formatCents(tariff.minimum_cents)}`,
      amount_cents: tariff.minimum_cents - subtotal,
    });
  }
  return lines;
}

/** The band with the greatest start at or below the quantity (bands are strictly ascending). */
function bandFor<B>(bands: readonly B[], from: (band: B) => number, quantity: number): B | undefined {
  let found: B | undefined;
  for (const band of bands) {
    if (from(band) <= quantity) found = band;
  }
  return found;
}

/** The smallest threshold the duration is strictly shorter than (thresholds are strictly ascending). */
function thresholdFor<T extends { shorter_than_minutes: number }>(
  thresholds: readonly T[],
  durationMs: number,
): T | undefined {
  return thresholds.find((t) => durationMs < t.shorter_than_minutes * MINUTE_MS);
}

function sumLines(lines: readonly QuoteLine[]): number {
  return lines.reduce((sum, line) => sum + line.amount_cents, 0);
}

/** Weights and volumes are compared at gram / cm3 precision, so float sums do not miss a band. */
function roundQuantity(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Minutes shown in a label: whole minutes elapsed, never negative (a slot already started shows 0). */
function wholeMinutes(ms: number): number {
  return Math.max(0, Math.floor(ms / MINUTE_MS));
}

/**
 * What a tariff's rules must satisfy beyond their schema: bands and thresholds strictly
 * ascending, so "the band from X" and "the smallest threshold" always name exactly one entry.
 * Empty when none. Pricing refuses to store a tariff with problems; the operator's preview of a
 * draft tariff answers the same messages.
 */
export function tariffRuleProblems(rules: TariffRules): string[] {
  return [
    ...ascending(rules.weight_bands, "weight_bands", "from_kg"),
    ...ascending(rules.volume_bands, "volume_bands", "from_dm3"),
    ...ascending(rules.slot_surcharges, "slot_surcharges", "shorter_than_minutes"),
    ...ascending(rules.lead_time_surcharges, "lead_time_surcharges", "shorter_than_minutes"),
  ];
}

function ascending<T, K extends keyof T & string>(items: readonly T[], label: string, key: K): string[] {
  const problems: string[] = [];
  for (let i = 1; i < items.length; i++) {
    const previous = items[i - 1]?.[key] as number;
    const current = items[i]?.[key] as number;
    if (!(current > previous)) {
      problems.push(`${label}[${i}].${key} must be greater than ${label}[${i - 1}].${key} (${previous})`);
    }
  }
  return problems;
}

/** 1234 → "12.34": the tariff does not name a currency. */
export function formatCents(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}
