/**
 * Tariff management on NATS (answered by the pricing service) and the operator API's tariff
 * bodies. A tariff is a version: it is never changed, a new one with a later effective_from
 * replaces it from then on, so the tariff in force at any past moment stays what it was.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { LIMITS, Nullable, Timestamp } from "./common.ts";
import { Direction } from "./delivery.ts";
import { QuoteLine } from "./pricing.ts";

/** Bounds of the tariff numbers (ours): a price component up to 100,000.00, a threshold up to a week. */
export const TARIFF_LIMITS = {
  cents: 10_000_000,
  bandsPerComponent: 20,
  thresholdMinutes: 7 * 24 * 60,
  noteLength: 500,
  /** Longest slot or lead time of a preview's sample: a year. */
  previewMinutes: 366 * 24 * 60,
} as const;

const Cents = (extra: object = {}) => Type.Integer({ minimum: 0, maximum: TARIFF_LIMITS.cents, ...extra });

/** A band starts at its `from_*` (inclusive) and lasts until the next band's start. */
const bands = <T extends TSchema>(item: T, description: string) =>
  Type.Array(item, { maxItems: TARIFF_LIMITS.bandsPerComponent, default: [], description });
const Quantity = Type.Number({ minimum: 0, maximum: 1_000_000_000 });
const WeightBand = Type.Object({ from_kg: Quantity, cents: Cents() }, { additionalProperties: false });
const VolumeBand = Type.Object({ from_dm3: Quantity, cents: Cents() }, { additionalProperties: false });

/** A surcharge applies when the duration is strictly shorter than its threshold. */
const thresholds = (description: string) =>
  Type.Array(
    Type.Object(
      {
        shorter_than_minutes: Type.Integer({ minimum: 1, maximum: TARIFF_LIMITS.thresholdMinutes }),
        cents: Cents(),
      },
      { additionalProperties: false },
    ),
    { maxItems: TARIFF_LIMITS.bandsPerComponent, default: [], description },
  );

/** The pricing rules of one tariff version, in cents. */
const tariffRuleFields = {
  base_cents: Type.Object(
    { outbound: Cents(), inbound: Cents(), other: Cents() },
    { additionalProperties: false, description: "Base price per direction." },
  ),
  per_package_cents: Cents({ default: 0, description: "Times the number of packages (sum of amounts)." }),
  weight_bands: bands(WeightBand, "On the total weight; strictly ascending from_kg."),
  volume_bands: bands(VolumeBand, "On the total volume; strictly ascending from_dm3."),
  slot_surcharges: thresholds("On the shortest slot; strictly ascending thresholds; the smallest that applies."),
  lead_time_surcharges: thresholds(
    "On the time from requested_at to the earliest slot start; strictly ascending; the smallest that applies.",
  ),
  minimum_cents: Cents({ default: 0, description: "The price is never below it." }),
};
/** The rules of a tariff version without its identity. */
export const TariffRules = Type.Object(tariffRuleFields, { additionalProperties: false });
export type TariffRules = Static<typeof TariffRules>;

const Note = Type.String({ maxLength: TARIFF_LIMITS.noteLength, description: "Free text for operators." });

/** A new tariff version as an operator gives it (operator API body). */
export const TariffInput = Type.Object(
  {
    /** When the version comes into force; now when omitted; never in the past. */
    effective_from: Type.Optional(Timestamp),
    ...tariffRuleFields,
    note: Type.Optional(Note),
  },
  { additionalProperties: false },
);
export type TariffInput = Static<typeof TariffInput>;

/**
 * A sample delivery the operator prices a draft tariff with, before storing it: described in the
 * tariff's own terms (slot length, lead time), so the preview does not depend on the clock.
 */
const TariffPreviewSample = Type.Object(
  {
    direction: Direction,
    packages: Type.Array(
      Type.Object(
        {
          amount: Type.Integer({ minimum: 1, maximum: LIMITS.packageAmount }),
          volume_dm3: Type.Number({ minimum: 0, maximum: LIMITS.packageVolumeDm3 }),
          weight_kg: Type.Number({ minimum: 0, maximum: LIMITS.packageWeightKg }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: LIMITS.packagesPerDelivery },
    ),
    slot_minutes: Type.Integer({
      minimum: 1,
      maximum: TARIFF_LIMITS.previewMinutes,
      description: "Length of the delivery's shortest slot.",
    }),
    lead_time_minutes: Type.Integer({
      minimum: 0,
      maximum: TARIFF_LIMITS.previewMinutes,
      description: "Time from the request to the earliest slot start.",
    }),
  },
  { additionalProperties: false },
);

/**
 * The operator API's preview body: a draft tariff, exactly as it would be stored (its
 * `effective_from` is not used: the draft is priced as if in force), and the sample to price.
 */
export const TariffPreviewInput = Type.Object(
  { ...TariffInput.properties, sample: TariffPreviewSample },
  { additionalProperties: false },
);
export type TariffPreviewInput = Static<typeof TariffPreviewInput>;

/** The sample's price under the draft and its lines, as a quote would give them; nothing is stored. */
export const TariffPreview = Type.Object(
  { price_cents: Type.Integer({ minimum: 0 }), lines: Type.Array(QuoteLine) },
  { title: "TariffPreview", additionalProperties: false },
);
export type TariffPreview = Static<typeof TariffPreview>;

/** A stored tariff version. */
export const Tariff = Type.Object(
  {
    id: Type.Integer(),
    account_id: Type.Integer(),
    effective_from: Timestamp,
    ...tariffRuleFields,
    note: Nullable(Note),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export type Tariff = Static<typeof Tariff>;

const AccountId = Type.Integer({ minimum: 1 });

/** `subjects.pricingTariffsCreate`: stores a new version; the reply is the Tariff. */
export const TariffCreateRequest = Type.Object(
  { account_id: AccountId, effective_from: Type.Optional(Timestamp), ...tariffRuleFields, note: Type.Optional(Note) },
  { additionalProperties: false },
);
export type TariffCreateRequest = Static<typeof TariffCreateRequest>;

/** `subjects.pricingTariffsList`: every version of an account, latest effective_from first. */
export const TariffListRequest = Type.Object({ account_id: AccountId }, { additionalProperties: false });
export type TariffListRequest = Static<typeof TariffListRequest>;
export const TariffListReply = Type.Object({ tariffs: Type.Array(Tariff) }, { additionalProperties: false });
export type TariffListReply = Static<typeof TariffListReply>;

/** `subjects.pricingTariffsGet`: one version by id; the reply is the Tariff (404 error reply when unknown). */
export const TariffGetRequest = Type.Object(
  { account_id: AccountId, tariff_id: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);
export type TariffGetRequest = Static<typeof TariffGetRequest>;

/** `subjects.pricingTariffsChanged`: broadcast after a version is stored, so every replica drops its cache. */
export const TariffsChanged = Type.Object(
  { account_id: Type.Integer(), tariff_id: Type.Integer() },
  { additionalProperties: false },
);
export type TariffsChanged = Static<typeof TariffsChanged>;

/** One tariff version as the pricing rules need it: its id, its start and its rules. */
export const TariffVersionEntry = Type.Object(
  { id: Type.Integer(), effective_from: Timestamp, ...tariffRuleFields },
  { additionalProperties: false },
);
export type TariffVersionEntry = Static<typeof TariffVersionEntry>;

/**
 * The value of `tariffsKey(account_id)` in the TARIFFS bucket: every version of the account,
 * written by pricing after each new version (and at its boot), read by delivery-api to price
 * while NATS is down. No key: the account has no tariff.
 */
export const AccountTariffs = Type.Object(
  { account_id: AccountId, versions: Type.Array(TariffVersionEntry) },
  { title: "AccountTariffs", additionalProperties: false },
);
export type AccountTariffs = Static<typeof AccountTariffs>;
