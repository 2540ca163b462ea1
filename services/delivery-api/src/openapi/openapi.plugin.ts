/**
 * The OpenAPI 3.1 document of the client API, generated from the route schemas (the contracts
 * schemas that also validate requests), at /api/v2/openapi.json, and a self-contained docs page
 * at /api/v2/docs (Swagger UI served from its own package, nothing from a CDN). Both are public.
 * Register before the client routes: the generator sees only routes registered after it.
 */
import { DeliveryEvent } from "@dos/contracts";
import { PAGE_CSP } from "@dos/service-kit";
import swagger, { type OpenAPIV3_2 } from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

export interface OpenApiOptions {
  publicUrl: string;
}

const CLIENT_PREFIX = "/api/v2/";

/**
 * The kit's page policy, plus the one style element Swagger UI's script inserts (by its hash, so
 * no other inline style runs). A Swagger UI upgrade that changes it fails the Chromium test of
 * the docs page, which names the new hash.
 */
const SWAGGER_UI_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";
const DOCS_CSP = PAGE_CSP.replace("style-src 'self'", `style-src 'self' ${SWAGGER_UI_STYLE}`);

async function openApi(app: FastifyInstance, options: OpenApiOptions) {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Delivery Ordering Service — client API",
        version: "2",
        description:
          'Create and manage deliveries. Every error answer is `{"errors": ["<field label> <problem>"]}`. ' +
          "Each account has a rate limit (default 100 requests per 5 s): every answer carries the IETF " +
          '`RateLimit-Policy` (`"account";q=<quota>;w=<window seconds>`) and `RateLimit` (`"account";r=<left>;t=<seconds ' +
          "until whole>`) fields, and a request past it is answered 429 with `Retry-After` (seconds). " +
          "Decisions on what the specification leaves open are in docs/spec-decisions.md.",
      },
      servers: [{ url: options.publicUrl }],
      components: {
        securitySchemes: {
          userEmail: { type: "apiKey", in: "header", name: "X-User-Email" },
          userToken: { type: "apiKey", in: "header", name: "X-User-Token" },
        },
      },
      security: [{ userEmail: [], userToken: [] }],
      tags: [
        { name: "deliveries", description: "Deliveries, their tasks and packages." },
        { name: "package types", description: "The account's package type catalogue." },
      ],
      webhooks: { deliveryEvent: deliveryEventWebhook },
    },
    // Only the client API is documented: the operator API, probes and docs routes stay out.
    transform: ({ schema, url }) => {
      const documented = url.startsWith(CLIENT_PREFIX) && !url.startsWith(`${CLIENT_PREFIX}docs`);
      return { schema: documented ? schema : { ...schema, hide: true }, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: "/api/v2/docs", uiConfig: { deepLinking: true }, staticCSP: DOCS_CSP });
  app.get("/api/v2/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}

export const openApiPlugin = fp(openApi, { name: "openapi" });

/** What the webhook dispatcher POSTs to a registered endpoint (docs/webhooks.md in full). */
const deliveryEventWebhook: OpenAPIV3_2.PathItemObject = {
  post: {
    summary: "A delivery changed",
    description:
      "POSTed to each webhook endpoint of the account (`/api/v2/webhooks`) for every delivery change of the kinds " +
      "it subscribed to, signed per Standard Webhooks (HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{raw body}`), " +
      "in order per delivery, retried until a 2xx answer. Verifying, retries and replays: docs/webhooks.md.",
    parameters: [
      {
        in: "header",
        name: "webhook-id",
        required: true,
        description: "The event id, the same on every retry and replay: ignore an id already handled.",
        schema: { type: "string", format: "uuid" },
      },
      {
        in: "header",
        name: "webhook-timestamp",
        required: true,
        description: "Unix seconds when this attempt was sent; refuse one more than 5 minutes away from now.",
        schema: { type: "string", pattern: "^[0-9]+$" },
      },
      {
        in: "header",
        name: "webhook-signature",
        required: true,
        description: "`v1,<base64 signature>`; during a secret rotation two of them, space-separated.",
        schema: { type: "string" },
      },
    ],
    // The contract's JSON Schema as plain JSON: OpenAPI 3.1 takes JSON Schema as it is, but the
    // openapi-types typings do not know TypeBox's.
    requestBody: {
      required: true,
      content: { "application/json": { schema: JSON.parse(JSON.stringify(DeliveryEvent)) } },
    },
    responses: {
      "2XX": { description: "Received. Answer within 15 seconds and do the work after answering." },
      default: { description: "Not received: the event is sent again on the retry schedule." },
    },
  },
};
