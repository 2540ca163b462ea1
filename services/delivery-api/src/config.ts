/** delivery-api's configuration, validated at boot (see the README's configuration table). */
import { PROOF_IMAGE_MAX_BYTES, RATE_LIMIT_MAX_WINDOW_SECONDS } from "@dos/contracts";
import { commonConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import { RATE_LIMIT_MAX_QUOTA } from "./accounts/accounts.schemas.ts";

/** Prefix of the variables only delivery-api reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "API_";

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({
    default: 3000,
    minimum: 0,
    maximum: 65535,
    description: "Public HTTP port: client API, tracking pages, media, health, metrics (not the operator API).",
  }),
  API_OPS_PORT: Type.Integer({
    default: 3004,
    minimum: 0,
    maximum: 65535,
    description:
      "Internal HTTP port: the only one serving the operator API (/ops/v1), besides everything PORT serves. Never route it from the internet.",
  }),
  API_OPS_TOKEN: Type.String({
    minLength: 24,
    description: "Bearer token of the operator API (/ops/v1) and CLI; at least 24 characters.",
  }),
  API_PUBLIC_URL: Type.String({
    default: "http://localhost:3000",
    pattern: "^https?://",
    description: "Public base URL, used in tracking links.",
  }),
  API_BODY_LIMIT_BYTES: Type.Integer({
    default: 262_144,
    minimum: 1024,
    description: "Largest request body accepted; larger gets 413.",
  }),
  API_PRICING_TIMEOUT_MS: Type.Integer({
    default: 2000,
    minimum: 50,
    description: "How long a quote may take before create answers 503.",
  }),
  API_PRICING_GATHER_MS: Type.Integer({
    default: 30,
    minimum: 0,
    maximum: 200,
    description:
      "How long a quote waits for others to leave with it, when quotes come less than this far apart (0: never waits). Creates priced together are committed together: fewer wake-ups per create at a steady rate.",
  }),
  API_AUTH_CACHE_MS: Type.Integer({
    default: 5000,
    minimum: 0,
    description:
      "How long a successful client login is remembered; a token revoked on another replica works here until then (0: never remembered).",
  }),
  API_RATE_LIMIT_ENABLED: Type.Boolean({
    default: true,
    description:
      "Whether the client API limits each account (false only behind a gateway that already does); failed authentications are limited either way.",
  }),
  API_RATE_LIMIT_QUOTA: Type.Integer({
    default: 100,
    minimum: 1,
    maximum: RATE_LIMIT_MAX_QUOTA,
    description:
      "Client API requests an account may send per API_RATE_LIMIT_WINDOW_SECONDS, unless an operator set its own.",
  }),
  API_RATE_LIMIT_WINDOW_SECONDS: Type.Integer({
    default: 5,
    minimum: 1,
    maximum: RATE_LIMIT_MAX_WINDOW_SECONDS,
    description: "The window of API_RATE_LIMIT_QUOTA; the quota refills evenly over it.",
  }),
  API_RATE_LIMIT_TIMEOUT_MS: Type.Integer({
    default: 250,
    minimum: 10,
    description: "Longest wait for the shared rate-limit state in NATS before a replica decides alone.",
  }),
  API_AUTH_FAILURE_QUOTA: Type.Integer({
    default: 30,
    minimum: 1,
    description:
      "Failed authentications a client address (or an e-mail) may make per API_AUTH_FAILURE_WINDOW_SECONDS before it gets 429 without a lookup; per replica.",
  }),
  API_AUTH_FAILURE_WINDOW_SECONDS: Type.Integer({
    default: 60,
    minimum: 1,
    maximum: RATE_LIMIT_MAX_WINDOW_SECONDS,
    description: "The window of API_AUTH_FAILURE_QUOTA.",
  }),
  API_TRUSTED_TOKENS_REFRESH_MS: Type.Integer({
    default: 1000,
    minimum: 100,
    description:
      "How often tokens created since are read, so that their holders skip the failed-authentication budgets before first use.",
  }),
  API_OUTBOX_POLL_MS: Type.Integer({
    default: 1000,
    minimum: 10,
    description:
      "How often the outbox relays look for work when no NOTIFY woke them (a lost LISTEN connection, a first event whose publisher died).",
  }),
  API_OUTBOX_RETENTION_HOURS: Type.Integer({
    default: 168,
    minimum: 1,
    description: "How long a published outbox event (and fleet change) is kept before housekeeping deletes it.",
  }),
  API_AUDIT_RETENTION_DAYS: Type.Integer({
    default: 400,
    minimum: 1,
    maximum: 36_500,
    description: "How long an entry of the operator API's audit log is kept before housekeeping deletes it.",
  }),
  API_HOUSEKEEPING_INTERVAL_MS: Type.Integer({
    default: 3_600_000,
    minimum: 100,
    description: "How often expired outbox events, idempotency records and audit entries are deleted.",
  }),
  API_SMS_PROVIDER: Type.Union([Type.Literal("log"), Type.Literal("http")], {
    default: "log",
    description: "How tracking SMS leave: log (written to the log only) or http (API_SMS_URL).",
  }),
  API_SMS_URL: Type.Optional(
    Type.String({
      pattern: "^https?://",
      description: "SMS provider endpoint (JSON POST), with API_SMS_PROVIDER=http.",
    }),
  ),
  API_SMS_TOKEN: Type.Optional(
    Type.String({ description: "Bearer token sent to the SMS provider, when it needs one." }),
  ),
  API_SMS_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 100, description: "SMS provider request timeout." }),
  API_SMS_RETRY_MS: Type.Integer({
    default: 30_000,
    minimum: 100,
    description: "Wait before an SMS the provider refused is tried again (5 attempts).",
  }),
  API_TRACKING_TTL_MS: Type.Integer({
    default: 7 * 24 * 3_600_000,
    minimum: 1000,
    description: "How long a tracking page stays open after its task completed or its delivery was cancelled.",
  }),
  API_TRACKING_PUSH_MS: Type.Integer({
    default: 1000,
    minimum: 50,
    description: "How often the open tracking streams' states are read (one batch for all of them).",
  }),
  API_TRACKING_STREAMS_PER_TOKEN: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 100_000,
    description: "Most tracking streams open at once on one tracking link, per replica; more get 429.",
  }),
  API_TRACKING_STREAMS_PER_ADDRESS: Type.Integer({
    default: 20,
    minimum: 1,
    maximum: 100_000,
    description: "Most tracking streams open at once from one client address, per replica; more get 429.",
  }),
  API_TRACKING_STREAM_MAX_MS: Type.Integer({
    default: 30 * 60_000,
    minimum: 1000,
    description: "A tracking stream is ended after this long (EventSource reconnects by itself).",
  }),
  API_TRACKING_HEARTBEAT_MS: Type.Integer({
    default: 15_000,
    minimum: 100,
    description: "A tracking stream silent this long gets a comment line, so a dead client is noticed.",
  }),
  API_ETA_SPEED_KMH: Type.Number({ default: 20, exclusiveMinimum: 0, description: "Average speed used for ETAs." }),
  API_ETA_STOP_MINUTES: Type.Number({ default: 5, minimum: 0, description: "Time spent at a stop, added to ETAs." }),
  API_ETA_MIN_INTERVAL_MS: Type.Integer({
    default: 30_000,
    minimum: 0,
    description: "A task's ETA is recomputed at most this often.",
  }),
  API_TRACKER_FRESH_MS: Type.Integer({
    default: 120_000,
    minimum: 1000,
    description: "A tracker position younger than this replaces the messenger phone's.",
  }),
  API_MEDIA_MAX_BYTES: Type.Integer({
    default: PROOF_IMAGE_MAX_BYTES,
    minimum: 1024,
    description: "Largest signature or picture upload; larger gets 413.",
  }),
  API_SIMULATOR_TICK_MS: Type.Integer({
    default: 1000,
    minimum: 50,
    description: "How often the test-environment courier simulator looks for due steps.",
  }),
});
export type Config = Static<typeof configSchema>;
