/**
 * The operator's webhook routes under /ops/v1/accounts/{account_id}/webhooks (mounted where the
 * bearer guard already ran): the client's routes for the path's account, and re-enabling an
 * endpoint that failed until it was disabled, which only the operator may do. An unknown
 * account is a 404 here, before the dispatcher (which knows no accounts) is asked.
 */
import { compileValidator, Webhook } from "@dos/contracts";
import { notFound } from "@dos/service-kit";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { pathId } from "../http/request-input.ts";
import { createWebhooksBus, type WebhooksBusOptions } from "./webhooks.bus.ts";
import { registerWebhookRoutes, webhookErrors, webhookTags } from "./webhooks.routes.ts";

export interface WebhooksOpsOptions extends WebhooksBusOptions {
  accountExists: (accountId: number) => Promise<boolean>;
}

const validateWebhook = compileValidator(Webhook);

export async function webhooksOpsRoutes(app: FastifyInstance, options: WebhooksOpsOptions) {
  const { ask, IdParams } = registerWebhookRoutes(app, createWebhooksBus(options), {
    base: "/accounts/:accountId/webhooks",
    params: { accountId: Type.String({ description: "The account's id." }) },
    accountOf: async (request) => {
      const id = pathId((request.params as { accountId: string }).accountId, "account");
      if (!(await options.accountExists(id))) throw notFound(`account ${id}`);
      return id;
    },
    location: (accountId, webhookId) => `/ops/v1/accounts/${accountId}/webhooks/${webhookId}`,
  });

  app.post(
    "/accounts/:accountId/webhooks/:id/enable",
    {
      schema: {
        tags: webhookTags,
        operationId: "webhooks.enable",
        summary: "Enable a disabled webhook endpoint",
        description:
          "After a 410 or sustained failures disabled it: the next events are sent again. Events dead-lettered " +
          "when it was disabled, or published while it was, are not: replay sends them.",
        params: IdParams,
        response: { 200: Webhook, ...webhookErrors(401, 404, 503) },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string } }>) =>
      ask(request, "enable", { webhook_id: request.params.id }, validateWebhook),
  );
}
