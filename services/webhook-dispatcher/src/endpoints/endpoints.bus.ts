/**
 * The endpoint registry on NATS (request/reply, services framework): delivery-api forwards a
 * client's /api/v2/webhooks requests, and the operator's /ops/v1/accounts/{id}/webhooks ones,
 * here with the account id. Replies are JSON; a refusal is an error reply whose code is the
 * HTTP status to answer and whose body is an ErrorBody, so delivery-api passes it on unchanged.
 */
import {
  compileValidator,
  natsNames,
  WebhookAttemptsRequest,
  WebhookCreateRequest,
  WebhookListRequest,
  WebhookRefRequest,
  WebhookReplayRequest,
} from "@dos/contracts";
import { HttpError, isDependencyDown, validationMessages } from "@dos/service-kit";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Service, type ServiceMsg, Svcm } from "@nats-io/services";
import type { TSchema } from "@sinclair/typebox";
import type { Logger } from "pino";
import type { EndpointsService } from "./endpoints.service.ts";

export async function startEndpointsBus(options: {
  nc: NatsConnection;
  namespace: string;
  service: EndpointsService;
  logger: Logger;
}): Promise<Service> {
  const names = natsNames(options.namespace).services.webhooks;
  const { service, logger } = options;
  // @nats-io/services ships its own copy of nats-core's types; the connection is the same object.
  const svc = await new Svcm(options.nc as unknown as ConstructorParameters<typeof Svcm>[0]).add({
    name: names.name,
    version: "1.0.0",
    description: "Webhook endpoint registry of webhook-dispatcher",
    queue: names.queueGroup,
  });

  const operation = <T>(name: string, subject: string, schema: TSchema, run: (request: T) => Promise<unknown>) => {
    const validate = compileValidator<T>(schema);
    svc.addEndpoint(name, {
      subject,
      handler: (_error, msg) => void answer(msg, validate, run, logger),
    });
  };
  operation("create", names.subjects.create, WebhookCreateRequest, service.create);
  operation("list", names.subjects.list, WebhookListRequest, service.list);
  operation("delete", names.subjects.delete, WebhookRefRequest, service.remove);
  operation("rotate", names.subjects.rotate, WebhookRefRequest, service.rotate);
  operation("attempts", names.subjects.attempts, WebhookAttemptsRequest, service.attempts);
  operation("replay", names.subjects.replay, WebhookReplayRequest, service.replay);
  operation("enable", names.subjects.enable, WebhookRefRequest, service.enable);
  return svc;
}

async function answer<T>(
  msg: ServiceMsg,
  validate: ReturnType<typeof compileValidator<T>>,
  run: (request: T) => Promise<unknown>,
  logger: Logger,
): Promise<void> {
  try {
    let parsed: unknown;
    try {
      parsed = msg.json();
    } catch {
      throw new HttpError(400, "body is not valid JSON");
    }
    const checked = validate(parsed);
    if (!checked.ok) throw new HttpError(422, validationMessages(checked.errors));
    const result = await run(checked.value);
    msg.respond(JSON.stringify(result ?? {}));
  } catch (error) {
    if (error instanceof HttpError) {
      msg.respondError(error.statusCode, error.messages.join("; "), JSON.stringify({ errors: error.messages }));
    } else if (isDependencyDown(error)) {
      logger.warn({ err: error, subject: msg.subject }, "webhook request refused: dependency unavailable");
      msg.respondError(
        503,
        "service is temporarily unavailable",
        JSON.stringify({ errors: ["service is temporarily unavailable, retry later"] }),
      );
    } else {
      logger.error({ err: error, subject: msg.subject }, "webhook request failed");
      msg.respondError(500, "internal error", JSON.stringify({ errors: ["internal error"] }));
    }
  }
}
