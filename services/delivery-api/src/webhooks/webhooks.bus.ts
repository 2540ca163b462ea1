/**
 * Requests to webhook-dispatcher's endpoint registry over NATS, for the client's and the
 * operator's webhook routes alike: the account id travels in the request, so another account's
 * webhook is simply not found (404). The dispatcher's refusals keep their status (404, 409,
 * 422); no answer in time, no dispatcher running or a reply off the contract is a 503 with
 * Retry-After.
 */
import { jsonBody, natsNames, SERVICE_ERROR_HEADERS } from "@dos/contracts";
import { HttpError, unavailable } from "@dos/service-kit";
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import type { FastifyBaseLogger } from "fastify";

export interface WebhooksBusOptions {
  nc: NatsConnection;
  namespace: string;
  /** How long webhook-dispatcher has to answer; 5 s when not given. */
  timeoutMs?: number;
}

/** Seconds a caller is told to wait when webhook-dispatcher does not answer. */
const WEBHOOKS_RETRY_AFTER_SECONDS = 5;
/** Refusals that are the caller's to fix; anything else is the dispatcher's fault (503). */
const FORWARDED_CODES = new Set([404, 409, 422]);

export type WebhookOperation = keyof ReturnType<typeof natsNames>["services"]["webhooks"]["subjects"];

export interface WebhooksBus {
  /** One request on the account's behalf; answers the dispatcher's reply or throws the HTTP error. */
  ask(
    log: FastifyBaseLogger,
    accountId: number,
    operation: WebhookOperation,
    body: object,
    validate: (value: unknown) => { ok: boolean },
  ): Promise<unknown>;
}

export function createWebhooksBus(options: WebhooksBusOptions): WebhooksBus {
  const subjects = natsNames(options.namespace).services.webhooks.subjects;
  const timeoutMs = options.timeoutMs ?? 5000;

  return {
    async ask(log, accountId, operation, body, validate) {
      const subject = subjects[operation];
      let msg: Msg;
      try {
        msg = await options.nc.request(subject, JSON.stringify({ account_id: accountId, ...body }), {
          timeout: timeoutMs,
        });
      } catch (error) {
        log.warn({ err: error, subject }, "webhook-dispatcher did not answer");
        throw dispatcherUnavailable();
      }
      const decoded = jsonBody(msg);
      const code = msg.headers?.get(SERVICE_ERROR_HEADERS.code);
      if (code) {
        const messages = (decoded as { errors?: unknown } | undefined)?.errors;
        if (FORWARDED_CODES.has(Number(code)) && Array.isArray(messages) && messages.length > 0) {
          throw new HttpError(Number(code), messages.map(String));
        }
        log.warn({ subject, code, errors: messages }, "webhook-dispatcher refused a request");
        throw dispatcherUnavailable();
      }
      if (!validate(decoded).ok) {
        log.warn({ subject }, "webhook-dispatcher answered off the contract");
        throw dispatcherUnavailable();
      }
      return decoded;
    },
  };
}

function dispatcherUnavailable(): HttpError {
  return unavailable("webhooks are temporarily unavailable; retry later", WEBHOOKS_RETRY_AFTER_SECONDS);
}
