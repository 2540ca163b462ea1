/** Bodies and answers of the operator API for the package type catalogue of an account. */
import { FRAGILITIES, LIMITS, ShortText, TEMPERATURES, Timestamp } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";

const Fragility = Type.Union([...FRAGILITIES.map((f) => Type.Literal(f)), Type.Null()]);
const Temperature = Type.Union([...TEMPERATURES.map((t) => Type.Literal(t)), Type.Null()]);

const fields = {
  name: ShortText({ description: "The exact type name clients see as `type`." }),
  volume_dm3: Type.Number({ exclusiveMinimum: 0, maximum: LIMITS.packageVolumeDm3 }),
  weight_kg: Type.Number({ exclusiveMinimum: 0, maximum: LIMITS.packageWeightKg }),
  fragility: Type.Optional(Fragility),
  temperature: Type.Optional(Temperature),
  is_size_category: Type.Optional(
    Type.Boolean({ description: "A size category (S, M, L...) is given alone in a delivery, with amount 1." }),
  ),
};

export const CreatePackageTypeBody = Type.Object(fields, { additionalProperties: false });
export type CreatePackageTypeBody = Static<typeof CreatePackageTypeBody>;

export const UpdatePackageTypeBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    volume_dm3: Type.Optional(fields.volume_dm3),
    weight_kg: Type.Optional(fields.weight_kg),
    fragility: fields.fragility,
    temperature: fields.temperature,
    is_size_category: fields.is_size_category,
    archived: Type.Optional(Type.Boolean({ description: "true archives the type, false restores it." })),
  },
  { additionalProperties: false },
);
export type UpdatePackageTypeBody = Static<typeof UpdatePackageTypeBody>;

export const ListPackageTypesQuery = Type.Object(
  { include_archived: Type.Boolean({ default: false }) },
  { additionalProperties: false },
);
export type ListPackageTypesQuery = Static<typeof ListPackageTypesQuery>;

/** A catalogue entry as operators see it (clients see the contracts' PackageType). */
export const CatalogueEntry = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    volume_dm3: Type.Number(),
    weight_kg: Type.Number(),
    // As the client's PackageType shows them (the columns' checks hold the values).
    fragility: Type.Union([Type.String({ description: FRAGILITIES.join(", ") }), Type.Null()]),
    temperature: Type.Union([Type.String({ description: TEMPERATURES.join(", ") }), Type.Null()]),
    is_size_category: Type.Boolean(),
    archived_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
  },
  { title: "CatalogueEntry" },
);
export type CatalogueEntry = Static<typeof CatalogueEntry>;
