/**
 * The v2 REST resources of the client API, as the spec shows them. Inputs and outputs are
 * separate schemas because the spec gives them different shapes (a task may be an integer on
 * input; a package may name a catalogue entry on input).
 */
import { type Static, Type } from "@sinclair/typebox";
import { DAY_PATTERN } from "../timestamps.ts";
import { LIMITS, LongText, Nullable, ShortText, Timestamp } from "./common.ts";

export const DELIVERY_STATUSES = ["saved", "scheduled", "picked_up", "delivered", "cancelled", "failed"] as const;
export const DIRECTIONS = ["outbound", "inbound", "other"] as const;
/** Allowed values of a package's fragility and temperature (not shown in the spec; ours). */
export const FRAGILITIES = ["not_fragile", "fragile", "very_fragile"] as const;
export const TEMPERATURES = ["ambient", "chilled", "frozen"] as const;

export const DeliveryStatus = Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)));
export type DeliveryStatus = Static<typeof DeliveryStatus>;
export const Direction = Type.Union(DIRECTIONS.map((d) => Type.Literal(d)));
export type Direction = Static<typeof Direction>;
const Fragility = Nullable(Type.Union(FRAGILITIES.map((f) => Type.Literal(f))));
const Temperature = Nullable(Type.Union(TEMPERATURES.map((t) => Type.Literal(t))));

// ---- Place ----------------------------------------------------------------------------------

const placeFields = {
  recipient_name: ShortText(),
  recipient_phone: Type.String({ minLength: 1, maxLength: LIMITS.phone }),
  recipient_email: Type.String({ format: "email", maxLength: LIMITS.email }),
  company_name: ShortText(),
  address: ShortText({ description: "Street number and street name only." }),
  postal_code: Type.String({ minLength: 1, maxLength: LIMITS.postalCode }),
  city: ShortText(),
  address_instructions: LongText({ description: "Access code, building, interphone, floor, apartment." }),
};

/** A place as a client sends it. */
export const PlaceInput = Type.Object(
  {
    recipient_name: placeFields.recipient_name,
    // null (or absent) only where the account may omit it (particular cases agreed with the operator).
    recipient_phone: Type.Optional(Nullable(placeFields.recipient_phone)),
    recipient_email: Type.Optional(Nullable(placeFields.recipient_email)),
    company_name: Type.Optional(Nullable(placeFields.company_name)),
    address: placeFields.address,
    postal_code: placeFields.postal_code,
    city: placeFields.city,
    address_instructions: Type.Optional(Nullable(placeFields.address_instructions)),
  },
  { title: "PlaceInput", additionalProperties: false },
);
export type PlaceInput = Static<typeof PlaceInput>;

/** A place in a response. */
export const Place = Type.Object(
  {
    recipient_name: Type.String(),
    recipient_phone: Nullable(Type.String()),
    recipient_email: Nullable(Type.String()),
    company_name: Nullable(Type.String()),
    address: Type.String(),
    postal_code: Type.String(),
    city: Type.String(),
    address_instructions: Nullable(Type.String()),
  },
  { title: "Place", additionalProperties: false },
);
export type Place = Static<typeof Place>;

// ---- Task -----------------------------------------------------------------------------------

/** A task as a client sends it: a saved address number, or slots and a place. */
export const TaskObjectInput = Type.Object(
  { slot_starting_at: Timestamp, slot_ending_at: Timestamp, place: PlaceInput },
  { title: "TaskObjectInput", additionalProperties: false },
);
/** Identifiers are positive integers that a JavaScript number holds exactly. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const SavedAddressId = Type.Integer({
  minimum: 1,
  maximum: MAX_ID,
  description: "Number of a saved address of the account.",
});
export const TaskInput = Type.Union([SavedAddressId, TaskObjectInput], { title: "TaskInput" });
export type TaskInput = Static<typeof TaskInput>;

export const CompletionSignature = Type.Object(
  { url: Type.String(), accepted_by: Type.String() },
  { additionalProperties: false },
);

/** A task in a response. */
export const Task = Type.Object(
  {
    slot_starting_at: Type.String(),
    slot_ending_at: Type.String(),
    place: Place,
    tracking_url: Nullable(Type.String()),
    eta: Nullable(Type.String()),
    completed_at: Nullable(Type.String()),
    failure_reason: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    completion_signature: Nullable(CompletionSignature),
    completion_pictures: Type.Array(Type.String()),
    completion_text: Nullable(Type.String()),
  },
  { title: "Task", additionalProperties: false },
);
export type Task = Static<typeof Task>;

// ---- Package --------------------------------------------------------------------------------

const Amount = Type.Integer({ minimum: 1, maximum: LIMITS.packageAmount });

/** A custom package given inline. */
export const InlinePackageInput = Type.Object(
  {
    name: ShortText(),
    amount: Amount,
    volume_dm3: Type.Number({ exclusiveMinimum: 0, maximum: LIMITS.packageVolumeDm3 }),
    weight_kg: Type.Number({ exclusiveMinimum: 0, maximum: LIMITS.packageWeightKg }),
    fragility: Type.Optional(Fragility),
    temperature: Type.Optional(Temperature),
    client_reference: Type.Optional(Nullable(ShortText())),
  },
  { title: "InlinePackageInput", additionalProperties: false },
);
/** A package given by its catalogue entry. */
export const CataloguePackageInput = Type.Object(
  { package_type_id: Type.Integer({ minimum: 1, maximum: MAX_ID }), amount: Amount },
  { title: "CataloguePackageInput", additionalProperties: false },
);
export const PackageInput = Type.Union([CataloguePackageInput, InlinePackageInput], { title: "PackageInput" });
export type PackageInput = Static<typeof PackageInput>;

/** A package in a response. */
export const Package = Type.Object(
  {
    package_type_id: Nullable(Type.Integer()),
    type: Type.String(),
    name: Type.String(),
    amount: Type.Integer(),
    volume_dm3: Type.Number(),
    weight_kg: Type.Number(),
    fragility: Nullable(Type.String()),
    temperature: Nullable(Type.String()),
    client_reference: Nullable(Type.String()),
  },
  { title: "Package", additionalProperties: false },
);
export type Package = Static<typeof Package>;

/** An entry of the account's package type catalogue. */
export const PackageType = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String(),
    volume: Type.Number(),
    weight: Type.Number(),
    fragility: Nullable(Type.String()),
    temperature: Nullable(Type.String()),
  },
  { title: "PackageType", additionalProperties: false },
);
export type PackageType = Static<typeof PackageType>;

// ---- Delivery -------------------------------------------------------------------------------

/** The v2 Delivery representation returned by get, create, update, cancel, latest and redelivery. */
export const Delivery = Type.Object(
  {
    id: Type.Integer(),
    created_at: Type.String(),
    status: DeliveryStatus,
    comments: Nullable(Type.String()),
    client_order_reference: Nullable(Type.String()),
    price_cents: Nullable(Type.Integer()),
    direction: Direction,
    bring_back_containers: Type.Boolean(),
    original_delivery_id: Nullable(Type.Integer()),
    redelivery_id: Nullable(Type.Integer()),
    dropoff: Nullable(Task),
    pickup: Nullable(Task),
    packages: Type.Array(Package),
    reversed_packages: Type.Array(Package),
  },
  { title: "Delivery", additionalProperties: false },
);
export type Delivery = Static<typeof Delivery>;

const deliveryInputFields = {
  sender_display_name: Type.Optional(Nullable(ShortText())),
  comments: Type.Optional(Nullable(LongText())),
  client_order_reference: Type.Optional(Nullable(ShortText())),
  bring_back_containers: Type.Optional(Type.Boolean()),
};

/** The body of create (and of quote). */
export const DeliveryCreateInput = Type.Object(
  {
    ...deliveryInputFields,
    dropoff: Type.Optional(TaskInput),
    pickup: Type.Optional(TaskInput),
    packages: Type.Array(PackageInput, { minItems: 1, maxItems: LIMITS.packagesPerDelivery }),
  },
  {
    title: "DeliveryCreateInput",
    additionalProperties: false,
    examples: [
      {
        client_order_reference: "ORDER-1042",
        dropoff: {
          slot_starting_at: "2026-12-01T14:00:00.000+01:00",
          slot_ending_at: "2026-12-01T16:00:00.000+01:00",
          place: {
            recipient_name: "Jeanne Martin",
            recipient_phone: "+33 6 12 34 56 78",
            address: "12 Rue de la Paix",
            postal_code: "75002",
            city: "Paris",
            address_instructions: "Code 1234, 3e étage",
          },
        },
        packages: [{ package_type_id: 7, amount: 2 }],
      },
    ],
  },
);
export type DeliveryCreateInput = Static<typeof DeliveryCreateInput>;

/** A task in an update or redelivery body: any subset of its fields, the place partial too. */
export const TaskPatchInput = Type.Union(
  [
    SavedAddressId,
    Type.Object(
      {
        slot_starting_at: Type.Optional(Timestamp),
        slot_ending_at: Type.Optional(Timestamp),
        place: Type.Optional(Type.Partial(PlaceInput, { additionalProperties: false })),
      },
      { additionalProperties: false },
    ),
  ],
  { title: "TaskPatchInput" },
);
export type TaskPatchInput = Static<typeof TaskPatchInput>;

/** The body of update (PATCH or PUT): only the fields to change. */
export const DeliveryUpdateInput = Type.Object(
  {
    ...deliveryInputFields,
    dropoff: Type.Optional(TaskPatchInput),
    pickup: Type.Optional(TaskPatchInput),
    packages: Type.Optional(Type.Array(PackageInput, { minItems: 1, maxItems: LIMITS.packagesPerDelivery })),
  },
  { title: "DeliveryUpdateInput", additionalProperties: false },
);
export type DeliveryUpdateInput = Static<typeof DeliveryUpdateInput>;

/**
 * The body of a redelivery: any delivery field to change. direction, packages,
 * reversed_packages and client_order_reference are accepted and ignored (spec rule 4).
 */
export const RedeliveryInput = Type.Object(
  {
    ...deliveryInputFields,
    client_order_reference: Type.Optional(Type.Unknown({ description: "Ignored: kept from the original delivery." })),
    dropoff: Type.Optional(TaskPatchInput),
    pickup: Type.Optional(TaskPatchInput),
    direction: Type.Optional(Type.Unknown({ description: "Ignored: kept from the original delivery." })),
    packages: Type.Optional(Type.Unknown({ description: "Ignored: kept from the original delivery." })),
    reversed_packages: Type.Optional(Type.Unknown({ description: "Ignored: kept from the original delivery." })),
  },
  { title: "RedeliveryInput", additionalProperties: false },
);
export type RedeliveryInput = Static<typeof RedeliveryInput>;

/** An item of the delivery list. */
export const DeliveryListItem = Type.Object(
  {
    id: Type.Integer(),
    created_at: Type.String(),
    status: DeliveryStatus,
    slot_starting_at: Type.String(),
    slot_ending_at: Type.String(),
    price_cents: Nullable(Type.Integer()),
  },
  { title: "DeliveryListItem", additionalProperties: false },
);
export type DeliveryListItem = Static<typeof DeliveryListItem>;

/** Largest page of the delivery list (decided in docs/spec-decisions.md). */
export const DELIVERY_LIST_MAX_PER_PAGE = 100;
/** Last page number asked for: a million deliveries at the largest page size. */
export const DELIVERY_LIST_MAX_PAGE = 10_000;
export const DELIVERY_LIST_DEFAULT_PER_PAGE = 25;

/** A calendar day (UTC) bounding a list filter, inclusive. */
const ListDay = (description: string) =>
  Type.Optional(Type.String({ pattern: DAY_PATTERN, maxLength: 10, examples: ["2026-11-21"], description }));

/**
 * The query of the delivery list and of latest: a reference filter, and bounded pages (list only).
 * The status and date filters are the list's only (beyond the spec; docs/spec-decisions.md).
 */
export const DeliveryListQuery = Type.Object(
  {
    client_order_reference: Type.Optional(
      Type.String({ maxLength: LIMITS.shortText, description: "Keep only deliveries with this reference." }),
    ),
    status: Type.Optional(
      Type.Union(
        DELIVERY_STATUSES.map((s) => Type.Literal(s)),
        { description: "Keep only deliveries in this status." },
      ),
    ),
    created_from: ListDay("Keep only deliveries created on this day (UTC, YYYY-MM-DD) or later."),
    created_to: ListDay("Keep only deliveries created on this day (UTC, YYYY-MM-DD) or earlier."),
    slot_from: ListDay("Keep only deliveries whose main task's slot starts on this day (UTC) or later."),
    slot_to: ListDay("Keep only deliveries whose main task's slot starts on this day (UTC) or earlier."),
    page: Type.Optional(
      Type.Integer({ minimum: 1, maximum: DELIVERY_LIST_MAX_PAGE, default: 1, description: "Page number, from 1." }),
    ),
    per_page: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: DELIVERY_LIST_MAX_PER_PAGE,
        default: DELIVERY_LIST_DEFAULT_PER_PAGE,
        description: "Items per page.",
      }),
    ),
  },
  // Unknown query parameters (cache busters, tracking tags) are ignored rather than refused.
  { title: "DeliveryListQuery" },
);
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

/** The price of a delivery body, without saving it (beyond the spec). */
export const DeliveryQuote = Type.Object(
  {
    price_cents: Nullable(Type.Integer()),
    direction: Direction,
  },
  { title: "DeliveryQuote", additionalProperties: false },
);
export type DeliveryQuote = Static<typeof DeliveryQuote>;
