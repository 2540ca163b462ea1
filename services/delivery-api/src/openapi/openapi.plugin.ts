/**
 * The two OpenAPI 3.1 documents of delivery-api, generated from the route schemas (the contracts
 * schemas that also validate requests):
 * - the client API's, public at /api/v2/openapi.json, with a self-contained docs page at
 *   /api/v2/docs (Swagger UI served from its own package, nothing from a CDN);
 * - the operator API's, at /ops/v1/openapi.json, behind the operator token like the rest of /ops
 *   (opsOpenApiRoute, registered inside that context).
 * Both are finished the same way (finishDocument): titled schemas become shared components, and
 * the headers and error answers every operation of the surface has are declared once.
 * libs/contracts/openapi/ holds both as files (write-documents.ts), which consumers build from.
 * Register before the routes: the generator sees only routes registered after it.
 */
import { DeliveryEvent } from "@dos/contracts";
import { PAGE_CSP } from "@dos/service-kit";
import swagger, { type OpenAPIV3_2 } from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance, FastifySchema } from "fastify";
import fp from "fastify-plugin";

declare module "fastify" {
  interface FastifyInstance {
    /** The operator API's document (the client API's is `swagger()`). */
    opsSwagger: () => OpenAPIV3_2.Document;
  }
}

const CLIENT_PREFIX = "/api/v2";
const OPS_PREFIX = "/ops/v1";

/**
 * The kit's page policy, plus the one style element Swagger UI's script inserts (by its hash, so
 * no other inline style runs). A Swagger UI upgrade that changes it fails the Chromium test of
 * the docs page, which names the new hash.
 */
const SWAGGER_UI_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";
const DOCS_CSP = PAGE_CSP.replace("style-src 'self'", `style-src 'self' ${SWAGGER_UI_STYLE}`);

type Json = Record<string, unknown>;
interface Answer {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Json;
}
interface Operation {
  operationId?: string;
  tags?: string[];
  responses?: Record<string, Answer>;
}
interface Document extends Json {
  paths?: Record<string, Record<string, unknown>>;
  webhooks?: Json;
  components?: { schemas?: Json } & Json;
}
/** The document @fastify/swagger built, to finish (its typings also allow a Swagger 2 one). */
const openapiOf = (built: object) => ("openapiObject" in built ? built.openapiObject : {}) as Document;

/** Headers declared once in components.headers and referenced by the answers that carry them. */
const HEADERS = {
  RateLimit: {
    description:
      'The account\'s live budget (IETF RateLimit fields): `"account";r=<requests left>;t=<seconds until whole>`.',
    schema: { type: "string" },
    example: '"account";r=97;t=1',
  },
  "RateLimit-Policy": {
    description: 'The account\'s quota: `"account";q=<requests>;w=<window seconds>`.',
    schema: { type: "string" },
    example: '"account";q=100;w=5',
  },
  "Retry-After": {
    description: "Seconds to wait before trying again.",
    schema: { type: "string", pattern: "^[0-9]+$" },
    example: "5",
  },
} as const;

/** What a status means on both APIs, for the answers whose schema says nothing more. */
const ANSWERS: Record<string, string> = {
  "2xx": "Done.",
  "400": "The body is not JSON.",
  "404": "Not found (another account's resources are not found either).",
  "409": "Conflicts with the resource's current state.",
  "410": "Gone.",
  "413": "The body is too large.",
  "415": "The body is not application/json.",
  "422": "Refused: each message names the field and the problem.",
  "503": "A service this one depends on did not answer; nothing was changed. Retry after Retry-After.",
};

interface Surface {
  prefix: string;
  /** Headers on every answer of the surface. */
  everyAnswer: Array<keyof typeof HEADERS>;
  /** Refusals every operation of the surface may answer (authentication, rate limits). */
  refusals: Record<string, string | undefined>;
}

const SURFACES = {
  client: {
    prefix: CLIENT_PREFIX,
    everyAnswer: ["RateLimit", "RateLimit-Policy"],
    refusals: {
      401: "X-User-Email and X-User-Token do not name an active token.",
      429: "The account's rate limit, or the address's failed-authentication budget, is spent.",
    },
  },
  ops: {
    prefix: OPS_PREFIX,
    everyAnswer: [],
    refusals: {
      401: "Authorization: Bearer <token> is missing, or is neither the automation token nor a live staff token of an enabled person.",
      403: "The caller's role may not call this route (`<role> may not <METHOD> <route>`).",
      429: "Too many failed authentications from this address: retry after Retry-After.",
    },
  },
} satisfies Record<string, Surface>;

async function openApi(app: FastifyInstance) {
  await app.register(
    swagger,
    documentOptions(SURFACES.client, {
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
      // The host that serves the document (API_PUBLIC_URL in production): the files do not
      // depend on one deployment's configuration.
      servers: [{ url: "/", description: "The host serving this document." }],
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
        { name: "webhooks", description: "Endpoints the account's delivery events are POSTed to." },
      ],
      webhooks: { deliveryEvent: deliveryEventWebhook },
    }),
  );
  await app.register(swagger, {
    decorator: "opsSwagger",
    ...documentOptions(SURFACES.ops, {
      info: {
        title: "Delivery Ordering Service — operator API",
        version: "1",
        description:
          "The operator's side: client accounts, their users and API tokens, places, zones, package types, " +
          "tariffs (pricing) and webhooks (webhook-dispatcher) of an account, and dispatch (messengers, vehicles, " +
          "rounds, tasks), the staff and the audit log. Served only on delivery-api's internal listener " +
          "(API_OPS_PORT). The bearer token is the automation token (API_OPS_TOKEN, role admin) or a staff token " +
          "(`dos_staff_…`, the person's role: admin, dispatcher or read_only); every change is audited " +
          "(GET /ops/v1/audit). Every error answer " +
          'is `{"errors": ["<field label> <problem>"]}`. The operator CLI (tools/ops-cli) is generated from ' +
          "this document: each operationId `<group>.<action>` is the command `<group> <action>`.",
      },
      servers: [{ url: "/", description: "delivery-api's internal listener (API_OPS_PORT)." }],
      components: {
        securitySchemes: {
          operatorToken: {
            type: "http",
            scheme: "bearer",
            description: "API_OPS_TOKEN (automation), or a person's staff token `dos_staff_…`.",
          },
        },
      },
      security: [{ operatorToken: [] }],
    }),
  });
  await app.register(swaggerUi, { routePrefix: "/api/v2/docs", uiConfig: { deepLinking: true }, staticCSP: DOCS_CSP });
  app.get("/api/v2/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}

export const openApiPlugin = fp(openApi, { name: "openapi" });

/** GET /ops/v1/openapi.json; register inside the /ops/v1 context, behind the operator token. */
export async function opsOpenApiRoute(ops: FastifyInstance) {
  ops.get("/openapi.json", { schema: { hide: true } }, async () => ops.opsSwagger());
}

/** @fastify/swagger's options for one surface's document: its routes only, finished alike. */
function documentOptions(surface: Surface, openapi: Omit<OpenAPIV3_2.Document, "openapi" | "paths">) {
  return {
    openapi: {
      openapi: "3.1.0",
      ...openapi,
      info: { ...openapi.info, license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } },
    },
    // JSON Schema's own `const`, as OpenAPI 3.1 allows: then the webhook body (given as JSON
    // Schema, not converted) and the routes' schemas agree, and share their components.
    convertConstToEnum: false,
    transform: only(surface.prefix),
    transformObject: (built: object) => finishDocument(openapiOf(built), surface),
  };
}

/** Keeps the routes under `prefix` (less its docs routes) in a document. */
function only(prefix: string) {
  return ({ schema, url }: { schema: FastifySchema; url: string }) => {
    const documented = url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}/docs`);
    return { schema: documented ? schema : { ...schema, hide: true }, url };
  };
}

/**
 * What both documents share beyond the routes' own schemas: every titled schema (the contracts'
 * ErrorBody, Delivery, Webhook, Tariff…) once in components.schemas and a $ref wherever it is
 * used; the surface's refusals and headers on every operation;
 * the operationId's group as the tag of an operation that names none.
 */
function finishDocument(doc: Document, surface: Surface): Document {
  const schemas: Record<string, Json> = {};
  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (typeof node !== "object" || node === null) return node;
    const copy: Json = {};
    for (const [key, value] of Object.entries(node)) copy[key] = hoist(value);
    const title = copy.title;
    if (typeof title !== "string" || !("type" in copy || "anyOf" in copy)) return copy;
    const known = schemas[title];
    // Two different schemas with one title (a Partial of a titled object) stay inline.
    if (known && JSON.stringify(known) !== JSON.stringify(copy)) return copy;
    schemas[title] = copy;
    return { $ref: `#/components/schemas/${title}` };
  };
  const paths = hoist(doc.paths) as Document["paths"];
  const webhooks = doc.webhooks && (hoist(doc.webhooks) as Document["webhooks"]);
  const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

  for (const pathItem of Object.values(paths ?? {})) {
    for (const [method, value] of Object.entries(pathItem ?? {})) {
      if (!["get", "put", "post", "patch", "delete"].includes(method)) continue;
      const operation = value as Operation;
      if (!operation.tags?.length && operation.operationId)
        operation.tags = [operation.operationId.split(".")[0] ?? ""];
      operation.responses ??= {};
      const responses = operation.responses;
      for (const [status, description] of Object.entries(surface.refusals)) {
        responses[status] ??= {
          description,
          content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
        };
      }
      for (const [status, response] of Object.entries(responses)) {
        const names: Array<keyof typeof HEADERS> = [...surface.everyAnswer];
        if (status === "429" || status === "503") names.push("Retry-After");
        response.headers ??= {};
        const headers = response.headers;
        for (const name of names) headers[name] ??= headerRef(name);
        if (Object.keys(headers).length === 0) delete response.headers;
        if (response.description === "Default Response") {
          response.description = surface.refusals[status] ?? ANSWERS[status] ?? ANSWERS[`${status[0]}xx`] ?? "";
        }
      }
    }
  }
  const used = new Set([...surface.everyAnswer, "Retry-After"] as Array<keyof typeof HEADERS>);
  return {
    ...doc,
    paths,
    ...(webhooks ? { webhooks } : {}),
    components: {
      ...doc.components,
      schemas: { ...doc.components?.schemas, ...sorted(schemas) },
      headers: Object.fromEntries([...used].map((name) => [name, HEADERS[name]])),
    },
  };
}

function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

/** What the webhook dispatcher POSTs to a registered endpoint (docs/webhooks.md in full). */
const deliveryEventWebhook: OpenAPIV3_2.PathItemObject = {
  post: {
    operationId: "deliveryEvent",
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
