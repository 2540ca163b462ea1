/**
 * Bodies and answers of the operator API's staff routes (TypeBox, checked at the edge), as the
 * staff contract between delivery-api and the console names them.
 */
import { LIMITS, Nullable, ShortText, Timestamp } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";
import { PageFields } from "../http/paging.ts";

const ROLES = ["admin", "dispatcher", "read_only"] as const;
const StaffRole = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  {
    description: "admin: everything; dispatcher: reads, and changes to the fleet and the day's work; read_only: reads.",
  },
);

const Email = Type.String({ format: "email", maxLength: LIMITS.email });

/** A person of the operator's staff. */
export const Staff = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String({ description: "Lower-cased." }),
    name: Type.String(),
    role: StaffRole,
    disabled: Type.Boolean({ description: "A disabled person's requests are refused (401) and their tokens revoked." }),
    created_at: Timestamp,
  },
  { title: "Staff", additionalProperties: false },
);
export type Staff = Static<typeof Staff>;

export const CreateStaffBody = Type.Object(
  { email: Email, name: ShortText(), role: StaffRole },
  { additionalProperties: false },
);
export type CreateStaffBody = Static<typeof CreateStaffBody>;

export const UpdateStaffBody = Type.Object(
  {
    name: Type.Optional(ShortText()),
    role: Type.Optional(StaffRole),
    disabled: Type.Optional(Type.Boolean({ description: "true revokes every token of the person." })),
  },
  { additionalProperties: false },
);
export type UpdateStaffBody = Static<typeof UpdateStaffBody>;

export const ListStaffQuery = Type.Object(
  { email: Type.Optional(Email), ...PageFields },
  { additionalProperties: false },
);
export type ListStaffQuery = Static<typeof ListStaffQuery>;

export const StaffList = Type.Object({ staff: Type.Array(Staff) }, { title: "StaffList", additionalProperties: false });

/** The caller of the operator API: the automation token, or a person by a staff token. */
export const OpsActor = Type.Object(
  {
    kind: Type.Union([Type.Literal("automation"), Type.Literal("staff")]),
    id: Nullable(Type.Integer()),
    email: Nullable(Type.String()),
    name: Type.String(),
    role: StaffRole,
  },
  { title: "OpsActor", additionalProperties: false },
);
export type OpsActorView = Static<typeof OpsActor>;

/** A staff token as listed: never the token. Revoked and expired tokens are not listed. */
export const StaffToken = Type.Object(
  {
    id: Type.Integer(),
    label: Type.String(),
    created_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()], {
      description: "When a request last used it, to the minute (null: never).",
    }),
    expires_at: Type.Union([Timestamp, Type.Null()]),
  },
  { title: "StaffToken", additionalProperties: false },
);
export type StaffToken = Static<typeof StaffToken>;

export const StaffTokenList = Type.Object(
  { tokens: Type.Array(StaffToken) },
  { title: "StaffTokenList", additionalProperties: false },
);

/** A created token: the only answer that holds it (`Authorization: Bearer <token>`). */
export const StaffTokenCreated = Type.Object(
  {
    id: Type.Integer(),
    label: Type.String(),
    token: Type.String({ pattern: "^dos_staff_[A-Za-z0-9_-]{43}$" }),
    created_at: Timestamp,
    expires_at: Type.Union([Timestamp, Type.Null()]),
  },
  { title: "StaffTokenCreated", additionalProperties: false },
);
export type StaffTokenCreated = Static<typeof StaffTokenCreated>;

export const CreateStaffTokenBody = Type.Object(
  {
    label: ShortText({ description: "What the token is for, e.g. `laptop CLI` or `console session 12`." }),
    expires_at: Type.Optional(
      Type.Union([Timestamp, Type.Null()], { description: "When it stops working; null or absent: never." }),
    ),
  },
  { additionalProperties: false },
);
export type CreateStaffTokenBody = Static<typeof CreateStaffTokenBody>;
