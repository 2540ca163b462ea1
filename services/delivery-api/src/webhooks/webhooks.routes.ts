/**
 * The webhook endpoint routes (beyond the spec), one definition for two surfaces: the client's
 * /api/v2/webhooks, acting for the caller's account, and the operator's
 * /ops/v1/accounts/{account_id}/webhooks (webhooks.ops-routes.ts), acting for the path's.
 * webhook-dispatcher owns the registry; these routes validate the request at the edge and
 * forward it over NATS (webhooks.bus.ts) with the account id.
 */
import {
  compileValidator,
  ErrorBody,
  Webhook,
  WebhookAttempt,
  WebhookAttemptsQuery,
  WebhookCreated,
  WebhookCreateInput,
  WebhookReplayAccepted,
  WebhookReplayInput,
  WebhookRotated,
} from "@dos/contracts";
import { type TProperties, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { createWebhooksBus, type WebhookOperation, type WebhooksBus, type WebhooksBusOptions } from "./webhooks.bus.ts";

/** How one surface names the account a request acts for. */
export interface WebhooksSurface {
  /** The routes' common path, e.g. `/webhooks`. */
  base: string;
  /** Path parameters of `base`, validated with the webhook's `id`. */
  params: TProperties;
  /** The account the request acts for; throws the HTTP error when there is none. */
  accountOf(request: FastifyRequest): number | Promise<number>;
  /** The full path of a created webhook (the Location header). */
  location(accountId: number, webhookId: string): string;
}

export const webhookTags = ["webhooks"];
export const webhookErrors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
type IdRequest = FastifyRequest<{ Params: { id: string } }>;

const validators = {
  created: compileValidator(WebhookCreated),
  list: compileValidator(Type.Array(Webhook)),
  deleted: compileValidator(Type.Object({})),
  rotated: compileValidator(WebhookRotated),
  attempts: compileValidator(Type.Array(WebhookAttempt)),
  replayed: compileValidator(WebhookReplayAccepted),
};

/** The client's routes: the caller's own account. */
export async function webhooksRoutes(app: FastifyInstance, options: WebhooksBusOptions) {
  registerWebhookRoutes(app, createWebhooksBus(options), {
    base: "/webhooks",
    params: {},
    accountOf: (request) => request.account.id,
    location: (_accountId, webhookId) => `/api/v2/webhooks/${webhookId}`,
  });
}

/**
 * Registers create, list, delete, rotate, attempts and replay on `surface.base`; answers the
 * forwarder that surface-specific routes (the operator's enable) use too.
 */
export function registerWebhookRoutes(app: FastifyInstance, bus: WebhooksBus, surface: WebhooksSurface) {
  const { base } = surface;
  const IdParams = Type.Object({ ...surface.params, id: Type.String({ description: "The webhook's id." }) });

  /** Forwards the request for the surface's account. */
  const ask = async (
    request: FastifyRequest,
    operation: WebhookOperation,
    body: object,
    validate: (value: unknown) => { ok: boolean },
  ) => bus.ask(request.log, await surface.accountOf(request), operation, body, validate);

  app.post(
    base,
    {
      schema: {
        tags: webhookTags,
        operationId: "webhooks.create",
        summary: "Register a webhook endpoint",
        description:
          "Every change of the account's deliveries is POSTed to `url`, signed (see docs/webhooks.md). " +
          "`events` limits the kinds sent; absent or null means every kind. The `secret` is shown only here.",
        params: Type.Object(surface.params),
        body: WebhookCreateInput,
        response: {
          // The declared headers are documentation only: the serializer reads the body schema.
          201: { ...WebhookCreated, headers: { location: Type.String({ description: "The new endpoint's URL." }) } },
          ...webhookErrors(401, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const accountId = await surface.accountOf(request);
      const body = request.body as object;
      const created = (await bus.ask(request.log, accountId, "create", body, validators.created)) as WebhookCreated;
      return reply
        .code(201)
        .header("location", surface.location(accountId, created.id))
        .header("cache-control", "no-store")
        .send(created);
    },
  );

  app.get(
    base,
    {
      schema: {
        tags: webhookTags,
        operationId: "webhooks.list",
        summary: "List webhook endpoints",
        params: Type.Object(surface.params),
        response: { 200: Type.Array(Webhook), ...webhookErrors(401, 503) },
      },
    },
    async (request) => ask(request, "list", {}, validators.list),
  );

  app.delete(
    `${base}/:id`,
    {
      schema: {
        tags: webhookTags,
        operationId: "webhooks.delete",
        summary: "Delete a webhook endpoint",
        description: "Its pending events are dropped.",
        params: IdParams,
        response: { 204: Type.Null(), ...webhookErrors(401, 404, 503) },
      },
    },
    async (request: IdRequest, reply) => {
      await ask(request, "delete", { webhook_id: request.params.id }, validators.deleted);
      return reply.code(204).send();
    },
  );

  app.post(
    `${base}/:id/rotate`,
    {
      schema: {
        tags: webhookTags,
        operationId: "webhooks.rotate",
        summary: "Rotate the signing secret",
        description:
          "The new secret is shown only here; the previous one keeps signing too until `previous_secret_expires_at`.",
        params: IdParams,
        response: { 200: WebhookRotated, ...webhookErrors(401, 404, 503) },
      },
    },
    async (request: IdRequest, reply) =>
      reply
        .header("cache-control", "no-store")
        .send(await ask(request, "rotate", { webhook_id: request.params.id }, validators.rotated)),
  );

  app.get(
    `${base}/:id/attempts`,
    {
      schema: {
        tags: webhookTags,
        operationId: "webhooks.attempts",
        summary: "Recent delivery attempts",
        description:
          "Newest first: event, status code, duration, error and outcome (`dead_lettered` after the last attempt).",
        params: IdParams,
        querystring: WebhookAttemptsQuery,
        response: { 200: Type.Array(WebhookAttempt), ...webhookErrors(401, 404, 422, 503) },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string }; Querystring: { limit?: number } }>) =>
      ask(request, "attempts", { webhook_id: request.params.id, ...request.query }, validators.attempts),
  );

  app.post(
    `${base}/:id/replay`,
    {
      schema: {
        tags: webhookTags,
        operationId: "webhooks.replay",
        summary: "Send every event since a time again",
        description: "Each event keeps its `webhook-id`, so a receiver that already has it can recognise it.",
        params: IdParams,
        body: WebhookReplayInput,
        response: { 202: WebhookReplayAccepted, ...webhookErrors(401, 404, 422, 503) },
      },
    },
    async (request: IdRequest, reply) => {
      const body = { webhook_id: request.params.id, ...(request.body as object) };
      return reply.code(202).send(await ask(request, "replay", body, validators.replayed));
    },
  );

  return { ask, IdParams };
}
