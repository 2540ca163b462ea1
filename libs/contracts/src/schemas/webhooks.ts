/**
 * Webhook endpoints: the client's REST bodies (delivery-api's /api/v2/webhooks, and the same
 * under /ops/v1/accounts/{id}/webhooks) and the request/reply contract on NATS between
 * delivery-api, which authenticates the client or the operator, and
 * webhook-dispatcher, which owns the endpoint registry. A request always carries the caller's
 * account id; the dispatcher never answers about another account's endpoint (404).
 *
 * An error reply carries the services framework's error headers (SERVICE_ERROR_HEADERS in
 * pricing.ts): the code is the HTTP status to answer, the body an ErrorBody.
 */
import { type Static, Type } from "@sinclair/typebox";
import { DELIVERY_EVENT_TYPES } from "../names.ts";
import { LIMITS, Nullable, Timestamp } from "./common.ts";
import { DeliveryEventType } from "./events.ts";

/** The kinds an endpoint subscribes to; absent or null means every kind, present and future. */
export const WebhookEventFilter = Type.Array(DeliveryEventType, {
  minItems: 1,
  // Each kind at most once, so never more entries than there are kinds.
  maxItems: DELIVERY_EVENT_TYPES.length,
  uniqueItems: true,
});

/** Body of POST /api/v2/webhooks. */
export const WebhookCreateInput = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: LIMITS.url, description: "http(s) URL the events are POSTed to." }),
    events: Type.Optional(Nullable(WebhookEventFilter)),
  },
  {
    title: "WebhookCreateInput",
    additionalProperties: false,
    examples: [
      { url: "https://shop.example/hooks/deliveries", events: ["delivery.created", "delivery.status_changed"] },
    ],
  },
);
export type WebhookCreateInput = Static<typeof WebhookCreateInput>;

/** Body of POST /api/v2/webhooks/{id}/replay: every event since then is sent again. */
export const WebhookReplayInput = Type.Object(
  { since: Timestamp },
  { title: "WebhookReplayInput", additionalProperties: false },
);
export type WebhookReplayInput = Static<typeof WebhookReplayInput>;

/** Query of GET /api/v2/webhooks/{id}/attempts. */
export const WebhookAttemptsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) },
  { title: "WebhookAttemptsQuery", additionalProperties: false },
);
export type WebhookAttemptsQuery = Static<typeof WebhookAttemptsQuery>;

export const WEBHOOK_STATUSES = ["enabled", "disabled"] as const;

/** An endpoint as the client sees it (never with its secret, except once in WebhookCreated). */
export const Webhook = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    url: Type.String(),
    events: Nullable(WebhookEventFilter),
    status: Type.Union(WEBHOOK_STATUSES.map((s) => Type.Literal(s))),
    disabled_reason: Nullable(Type.String()),
    created_at: Type.String(),
    /** While a rotation overlaps, the previous secret still signs until then. */
    previous_secret_expires_at: Nullable(Type.String()),
  },
  { title: "Webhook", additionalProperties: false },
);
export type Webhook = Static<typeof Webhook>;

/** The answer to create: the endpoint and its signing secret, shown this once. */
export const WebhookCreated = Type.Object(
  { ...Webhook.properties, secret: Type.String({ pattern: "^whsec_" }) },
  { title: "WebhookCreated", additionalProperties: false },
);
export type WebhookCreated = Static<typeof WebhookCreated>;

/** The answer to rotate: the new secret, shown this once, and until when the old one still signs. */
export const WebhookRotated = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    secret: Type.String({ pattern: "^whsec_" }),
    previous_secret_expires_at: Type.String(),
  },
  { title: "WebhookRotated", additionalProperties: false },
);
export type WebhookRotated = Static<typeof WebhookRotated>;

export const WEBHOOK_ATTEMPT_OUTCOMES = ["delivered", "retrying", "dead_lettered"] as const;

/** One POST of one event to one endpoint. */
export const WebhookAttempt = Type.Object(
  {
    id: Type.Integer(),
    event_id: Type.String({ format: "uuid" }),
    event_type: DeliveryEventType,
    delivery_id: Type.Integer(),
    sequence: Type.Integer(),
    attempt: Type.Integer({ minimum: 1, description: "1 for the first POST of this event to this endpoint." }),
    attempted_at: Type.String(),
    status_code: Nullable(Type.Integer()),
    duration_ms: Type.Integer(),
    error: Nullable(Type.String()),
    outcome: Type.Union(WEBHOOK_ATTEMPT_OUTCOMES.map((o) => Type.Literal(o))),
    next_attempt_at: Nullable(Type.String()),
  },
  { title: "WebhookAttempt", additionalProperties: false },
);
export type WebhookAttempt = Static<typeof WebhookAttempt>;

/** The answer to replay: how many events were queued again. */
export const WebhookReplayAccepted = Type.Object(
  { replayed: Type.Integer({ minimum: 0 }) },
  { title: "WebhookReplayAccepted", additionalProperties: false },
);
export type WebhookReplayAccepted = Static<typeof WebhookReplayAccepted>;

// ---- NATS requests (delivery-api → webhook-dispatcher) ---------------------------------------

const AccountId = Type.Integer({ minimum: 1 });
/** Any text: an id that is not a UUID is simply not found. */
const WebhookId = Type.String({ minLength: 1, maxLength: 200 });

export const WebhookCreateRequest = Type.Object(
  { account_id: AccountId, ...WebhookCreateInput.properties },
  { title: "WebhookCreateRequest", additionalProperties: false },
);
export type WebhookCreateRequest = Static<typeof WebhookCreateRequest>;

export const WebhookListRequest = Type.Object(
  { account_id: AccountId },
  { title: "WebhookListRequest", additionalProperties: false },
);
export type WebhookListRequest = Static<typeof WebhookListRequest>;

/**
 * Delete, rotate and enable name one endpoint of the account. Enable (the operator's only)
 * answers the endpoint (Webhook) as it is afterwards.
 */
export const WebhookRefRequest = Type.Object(
  { account_id: AccountId, webhook_id: WebhookId },
  { title: "WebhookRefRequest", additionalProperties: false },
);
export type WebhookRefRequest = Static<typeof WebhookRefRequest>;

export const WebhookAttemptsRequest = Type.Object(
  { account_id: AccountId, webhook_id: WebhookId, ...WebhookAttemptsQuery.properties },
  { title: "WebhookAttemptsRequest", additionalProperties: false },
);
export type WebhookAttemptsRequest = Static<typeof WebhookAttemptsRequest>;

export const WebhookReplayRequest = Type.Object(
  { account_id: AccountId, webhook_id: WebhookId, ...WebhookReplayInput.properties },
  { title: "WebhookReplayRequest", additionalProperties: false },
);
export type WebhookReplayRequest = Static<typeof WebhookReplayRequest>;
