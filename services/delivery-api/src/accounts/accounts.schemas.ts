/**
 * Bodies of the operator API for accounts, users and API tokens (TypeBox, checked at the edge),
 * and its answers (the views of accounts.service.ts and users.service.ts are typed by them).
 */
import { LIMITS, RATE_LIMIT_MAX_WINDOW_SECONDS, ShortText, Timestamp } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";
import { PageFields } from "../http/paging.ts";
import { OPS_LIMITS } from "../http/request-input.ts";

/** The largest quota an override may give (the column's check says the same). */
export const RATE_LIMIT_MAX_QUOTA = 1_000_000;

const ENVIRONMENTS = ["production", "test"] as const;
const Environment = Type.Union(ENVIRONMENTS.map((e) => Type.Literal(e)));

export const AccountSettingsInput = Type.Object(
  {
    bring_back_containers: Type.Optional(Type.Boolean()),
    default_task_gap_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: OPS_LIMITS.slotMinutes })),
    default_task_duration_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: OPS_LIMITS.slotMinutes })),
    recipient_phone_optional: Type.Optional(Type.Boolean()),
    phone_default_region: Type.Optional(Type.String({ minLength: 1, maxLength: 2 })),
  },
  { additionalProperties: false },
);
export type AccountSettingsInput = Static<typeof AccountSettingsInput>;

/**
 * The operator's override of the account's client API limit: `quota` requests per
 * `window_seconds` (the RateLimit-Policy header's q and w); null restores the default.
 */
export const RateLimitInput = Type.Union([
  Type.Object(
    {
      quota: Type.Integer({ minimum: 1, maximum: RATE_LIMIT_MAX_QUOTA }),
      window_seconds: Type.Integer({ minimum: 1, maximum: RATE_LIMIT_MAX_WINDOW_SECONDS }),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type RateLimitInput = Static<typeof RateLimitInput>;

export const CreateAccountBody = Type.Object(
  {
    company_name: ShortText(),
    environment: Type.Optional(Environment),
    settings: Type.Optional(AccountSettingsInput),
    rate_limit: Type.Optional(RateLimitInput),
  },
  { additionalProperties: false },
);
export type CreateAccountBody = Static<typeof CreateAccountBody>;

export const UpdateAccountBody = Type.Object(
  {
    company_name: Type.Optional(ShortText()),
    environment: Type.Optional(Environment),
    settings: Type.Optional(AccountSettingsInput),
    rate_limit: Type.Optional(RateLimitInput),
  },
  { additionalProperties: false },
);
export type UpdateAccountBody = Static<typeof UpdateAccountBody>;

export const ListAccountsQuery = Type.Object(
  {
    environment: Type.Optional(Environment),
    ...PageFields,
  },
  { additionalProperties: false },
);
export type ListAccountsQuery = Static<typeof ListAccountsQuery>;

export const CreateUserBody = Type.Object(
  {
    email: Type.String({ format: "email", maxLength: LIMITS.email }),
    name: Type.Optional(Type.Union([ShortText(), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

/** An account as the operator API shows it. */
export const Account = Type.Object(
  {
    id: Type.Integer(),
    company_name: Type.String(),
    environment: Environment,
    settings: Type.Object({
      bring_back_containers: Type.Boolean(),
      default_task_gap_minutes: Type.Integer(),
      default_task_duration_minutes: Type.Integer(),
      recipient_phone_optional: Type.Boolean(),
      phone_default_region: Type.String(),
    }),
    rate_limit: Type.Union([Type.Object({ quota: Type.Integer(), window_seconds: Type.Integer() }), Type.Null()], {
      description: "The account's client API limit; null: the service default applies.",
    }),
    created_at: Timestamp,
  },
  { title: "Account" },
);
export type Account = Static<typeof Account>;

export const User = Type.Object(
  {
    id: Type.Integer(),
    account_id: Type.Integer(),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { title: "User" },
);
export type User = Static<typeof User>;

/** A token as listed: its hint (first characters) only, never the token or its hash. */
export const ApiToken = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    hint: Type.String(),
    created_at: Timestamp,
    revoked_at: Type.Union([Timestamp, Type.Null()]),
    last_used_at: Type.Union([Timestamp, Type.Null()], {
      description: "When a request last used it, to the minute (null: never).",
    }),
  },
  { title: "ApiToken" },
);
export type ApiToken = Static<typeof ApiToken>;

/** A created token: the only answer that holds the token itself (X-User-Token). */
export const ApiTokenCreated = Type.Composite([ApiToken, Type.Object({ token: Type.String() })], {
  title: "ApiTokenCreated",
});

/** The operator's lookup of a user by e-mail, whatever the account (the console signs people in by e-mail). */
export const FindUsersQuery = Type.Object(
  { email: Type.String({ format: "email", maxLength: LIMITS.email }) },
  { additionalProperties: false },
);
export type FindUsersQuery = Static<typeof FindUsersQuery>;
