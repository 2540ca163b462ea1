/**
 * The OpenAPI 3.1 document of the client API, generated from the route schemas (the contracts
 * schemas that also validate requests), at /api/v2/openapi.json, and a self-contained docs page
 * at /api/v2/docs (Swagger UI served from its own package, nothing from a CDN). Both are public.
 * Register before the client routes: the generator sees only routes registered after it.
 */
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

export interface OpenApiOptions {
  publicUrl: string;
}

const CLIENT_PREFIX = "/api/v2/";

async function openApi(app: FastifyInstance, options: OpenApiOptions) {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Delivery Ordering Service — client API",
        version: "2",
        description:
          'Create and manage deliveries. Every error answer is `{"errors": ["<field label> <problem>"]}`. ' +
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
    },
    // Only the client API is documented: the operator API, probes and docs routes stay out.
    transform: ({ schema, url }) => {
      const documented = url.startsWith(CLIENT_PREFIX) && !url.startsWith(`${CLIENT_PREFIX}docs`);
      return { schema: documented ? schema : { ...schema, hide: true }, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: "/api/v2/docs", uiConfig: { deepLinking: true } });
  app.get("/api/v2/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}

export const openApiPlugin = fp(openApi, { name: "openapi" });
