/**
 * The client's webhook endpoints (/api/v2/webhooks, beyond the spec). webhook-dispatcher owns
 * the registry; these routes validate the request at the edge and forward it over NATS with the
 * caller's account id, so another account's webhook is simply not found (404). The dispatcher's
 * refusals keep their status (404, 409, 422); no answer in time, no dispatcher running or a
 * reply off the contract is a 503 with Retry-After.
 */
import {
  compileValidator,
  ErrorBody,
  natsNames,
  SERVICE_ERROR_HEADERS,
  Webhook,
  WebhookAttempt,
  WebhookAttemptsQuery,
  WebhookCreated,
  WebhookCreateInput,
  WebhookReplayAccepted,
  WebhookReplayInput,
  WebhookRotated,
} from "@dos/contracts";
import { HttpError, unavailable } from "@dos/service-kit";
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";

export interface WebhooksRoutesOptions {
  nc: NatsConnection;
  namespace: string;
  /** How long webhook-dispatcher has to answer; 5 s when not given. */
  timeoutMs?: number;
}

/** Seconds a client is told to wait when webhook-dispatcher does not answer. */
export const WEBHOOKS_RETRY_AFTER_SECONDS = 5;
/** Refusals that are the client's to fix; anything else is the dispatcher's fault (503). */
const FORWARDED_CODES = new Set([404, 409, 422]);

const tags = ["webhooks"];
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
const IdParams = Type.Object({ id: Type.String({ description: "The webhook's id." }) });
type IdRequest = FastifyRequest<{ Params: { id: string } }>;

const validators = {
  created: compileValidator(WebhookCreated),
  list: compileValidator(Type.Array(Webhook)),
  deleted: compileValidator(Type.Object({})),
  rotated: compileValidator(WebhookRotated),
  attempts: compileValidator(Type.Array(WebhookAttempt)),
  replayed: compileValidator(WebhookReplayAccepted),
};

export async function webhooksRoutes(app: FastifyInstance, options: WebhooksRoutesOptions) {
  const subjects = natsNames(options.namespace).services.webhooks.subjects;
  const timeoutMs = options.timeoutMs ?? 5000;

  /** One request to the dispatcher on the caller's behalf; answers its reply or throws the HTTP error. */
  async function ask(
    request: FastifyRequest,
    subject: string,
    body: object,
    validate: (value: unknown) => { ok: boolean },
  ): Promise<unknown> {
    let msg: Msg;
    try {
      msg = await options.nc.request(subject, JSON.stringify({ account_id: request.account.id, ...body }), {
        timeout: timeoutMs,
      });
    } catch (error) {
      request.log.warn({ err: error, subject }, "webhook-dispatcher did not answer");
      throw dispatcherUnavailable();
    }
    const decoded = decode(msg);
    const code = msg.headers?.get(SERVICE_ERROR_HEADERS.code);
    if (code) {
      const messages = (decoded as { errors?: unknown } | undefined)?.errors;
      if (FORWARDED_CODES.has(Number(code)) && Array.isArray(messages) && messages.length > 0) {
        throw new HttpError(Number(code), messages.map(String));
      }
      request.log.warn({ subject, code, errors: messages }, "webhook-dispatcher refused a request");
      throw dispatcherUnavailable();
    }
    if (!validate(decoded).ok) {
      request.log.warn({ subject }, "webhook-dispatcher answered off the contract");
      throw dispatcherUnavailable();
    }
    return decoded;
  }

  app.post(
    "/webhooks",
    {
      schema: {
        tags,
        summary: "Register a webhook endpoint",
        description:
          "Every change of the account's deliveries is POSTed to `url`, signed (see docs/webhooks.md). " +
          "`events` limits the kinds sent; absent or null means every kind. The `secret` is shown only here.",
        body: WebhookCreateInput,
        response: { 201: WebhookCreated, ...errors(401, 422, 503) },
      },
    },
    async (request, reply) => {
      const created = (await ask(
        request,
        subjects.create,
        request.body as object,
        validators.created,
      )) as WebhookCreated;
      return reply.code(201).header("location", `/api/v2/webhooks/${created.id}`).send(created);
    },
  );

  app.get(
    "/webhooks",
    {
      schema: { tags, summary: "List webhook endpoints", response: { 200: Type.Array(Webhook), ...errors(401, 503) } },
    },
    async (request) => ask(request, subjects.list, {}, validators.list),
  );

  app.delete(
    "/webhooks/:id",
    {
      schema: {
        tags,
        summary: "Delete a webhook endpoint",
        description: "Its pending events are dropped.",
        params: IdParams,
        response: { 204: Type.Null(), ...errors(401, 404, 503) },
      },
    },
    async (request: IdRequest, reply) => {
      await ask(request, subjects.delete, { webhook_id: request.params.id }, validators.deleted);
      return reply.code(204).send();
    },
  );

  app.post(
    "/webhooks/:id/rotate",
    {
      schema: {
        tags,
        summary: "Rotate the signing secret",
        description:
          "The new secret is shown only here; the previous one keeps signing too until `previous_secret_expires_at`.",
        params: IdParams,
        response: { 200: WebhookRotated, ...errors(401, 404, 503) },
      },
    },
    async (request: IdRequest) => ask(request, subjects.rotate, { webhook_id: request.params.id }, validators.rotated),
  );

  app.get(
    "/webhooks/:id/attempts",
    {
      schema: {
        tags,
        summary: "Recent delivery attempts",
        description:
          "Newest first: event, status code, duration, error and outcome (`dead_lettered` after the last attempt).",
        params: IdParams,
        querystring: WebhookAttemptsQuery,
        response: { 200: Type.Array(WebhookAttempt), ...errors(401, 404, 422, 503) },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string }; Querystring: { limit?: number } }>) =>
      ask(request, subjects.attempts, { webhook_id: request.params.id, ...request.query }, validators.attempts),
  );

  app.post(
    "/webhooks/:id/replay",
    {
      schema: {
        tags,
        summary: "Send every event since a time again",
        description: "Each event keeps its `webhook-id`, so a receiver that already has it can recognise it.",
        params: IdParams,
        body: WebhookReplayInput,
        response: { 202: WebhookReplayAccepted, ...errors(401, 404, 422, 503) },
      },
    },
    async (request: IdRequest, reply) => {
      const body = { webhook_id: request.params.id, ...(request.body as object) };
      return reply.code(202).send(await ask(request, subjects.replay, body, validators.replayed));
    },
  );
}

function decode(msg: Msg): unknown {
  try {
    return msg.data.length === 0 ? undefined : msg.json();
  } catch {
    return undefined;
  }
}

function dispatcherUnavailable(): HttpError {
  return unavailable("webhooks are temporarily unavailable; retry later", WEBHOOKS_RETRY_AFTER_SECONDS);
}
