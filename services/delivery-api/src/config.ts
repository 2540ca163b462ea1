/** delivery-api's configuration, validated at boot (see the README's configuration table). */
import { commonConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";

/** Prefix of the variables only delivery-api reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "API_";

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({
    default: 3000,
    minimum: 0,
    maximum: 65535,
    description: "HTTP port of the client, operator and tracking APIs.",
  }),
  API_OPS_TOKEN: Type.String({
    minLength: 24,
    description: "Bearer token of the operator API (/ops/v1) and CLI; at least 24 characters.",
  }),
  API_PUBLIC_URL: Type.String({
    default: "http://localhost:3000",
    pattern: "^https?://",
    description: "Public base URL, used in tracking links and OpenAPI.",
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
  API_AUTH_CACHE_MS: Type.Integer({
    default: 5000,
    minimum: 0,
    description:
      "How long a successful client login is remembered; a token revoked on another replica works here until then (0: never remembered).",
  }),
  API_OUTBOX_POLL_MS: Type.Integer({
    default: 200,
    minimum: 10,
    description: "Outbox relay poll interval when no change is signalled.",
  }),
});
export type Config = Static<typeof configSchema>;
