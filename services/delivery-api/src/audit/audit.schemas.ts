/** The audit log as GET /ops/v1/audit answers it, and its filters. */
import { Nullable, Timestamp } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";

const AUDIT_PAGE_MAX = 200;
const AUDIT_PAGE_DEFAULT = 50;

const ActorKind = Type.Union([Type.Literal("automation"), Type.Literal("staff")]);
const JsonValue = (description: string) => Type.Unknown({ description });

export const AuditEntry = Type.Object(
  {
    id: Type.Integer(),
    at: Timestamp,
    actor: Type.Object(
      {
        kind: ActorKind,
        id: Nullable(Type.Integer({ description: "The staff id; null for automation." })),
        name: Type.String({ description: "The person's name when they made the request, or `automation`." }),
      },
      { additionalProperties: false },
    ),
    method: Type.String(),
    route: Type.String({ description: "The route as the OpenAPI document writes it, e.g. `/ops/v1/vehicles/{id}`." }),
    resource_type: Type.String({
      description: "From the route: `vehicles`, `rounds`, `accounts/users`, `staff/tokens`…",
    }),
    resource_id: Nullable(Type.String()),
    status_code: Nullable(
      Type.Integer({
        description: "The answer's status; null while the request runs, or if its end was never recorded.",
      }),
    ),
    before: JsonValue("The resource as read just before the change (null: none, or a create), secrets redacted."),
    after: JsonValue("The resource as answered, or read after the change (null: refused, or gone), secrets redacted."),
    request_id: Type.String({ description: "The x-request-id of the request, as in the logs." }),
  },
  { title: "AuditEntry", additionalProperties: false },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditPage = Type.Object(
  {
    entries: Type.Array(AuditEntry),
    next_before_id: Nullable(
      Type.Integer({ description: "Pass as before_id for the next (older) page; null: this was the last." }),
    ),
  },
  { title: "AuditPage", additionalProperties: false },
);
export type AuditPage = Static<typeof AuditPage>;

export const AuditQuery = Type.Object(
  {
    actor_kind: Type.Optional(ActorKind),
    actor_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: "^[a-z_]+(/[a-z_]+)*$" })),
    resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    before_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    limit: Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX, default: AUDIT_PAGE_DEFAULT }),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

/** The most people GET /ops/v1/audit/people lists (an operator's staff is far fewer). */
export const AUDIT_PEOPLE_MAX = 1000;

export const AuditPeople = Type.Object(
  {
    people: Type.Array(
      Type.Object(
        {
          id: Type.Integer({ description: "The staff id: the audit log's actor_id." }),
          name: Type.String({ description: "The person's name now (entries keep the name of their time)." }),
          disabled: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    truncated: Type.Boolean({ description: `More than ${AUDIT_PEOPLE_MAX} people: the first by name are listed.` }),
  },
  { title: "AuditPeople", additionalProperties: false },
);
export type AuditPeople = Static<typeof AuditPeople>;
