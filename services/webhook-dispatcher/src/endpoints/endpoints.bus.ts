/**
 * The endpoint registry on NATS (request/reply, services framework): delivery-api forwards a
 * client's /api/v2/webhooks requests, and the operator's /ops/v1/accounts/{id}/webhooks ones,
 * here with the account id. Replies are JSON; a refusal is an error reply whose code is the
 * HTTP status to answer and whose body is an ErrorBody, so delivery-api passes it on unchanged.
 */
import {
  natsNames,
  SERVICE_NAMES,
  WebhookAttemptsRequest,
  WebhookCreateRequest,
  WebhookListRequest,
  WebhookRefRequest,
  WebhookReplayRequest,
} from "@dos/contracts";
import { type Logger, type NatsService, startJsonService } from "@dos/service-kit";
import type { NatsConnection } from "@nats-io/nats-core";
import type { EndpointsService } from "./endpoints.service.ts";

export async function startEndpointsBus(options: {
  nc: NatsConnection;
  namespace: string;
  service: EndpointsService;
  logger: Logger;
}): Promise<NatsService> {
  const names = natsNames(options.namespace).services.webhooks;
  const { service: registry } = options;
  const { service, endpoint } = await startJsonService({
    nc: options.nc,
    name: names.name,
    version: "1.0.0",
    description: "Webhook endpoint registry of webhook-dispatcher",
    queue: names.queueGroup,
    logger: options.logger,
    tracer: SERVICE_NAMES.webhookDispatcher,
    unavailable: "service is temporarily unavailable, retry later",
  });
  endpoint("create", names.subjects.create, registry.create, WebhookCreateRequest);
  endpoint("list", names.subjects.list, registry.list, WebhookListRequest);
  endpoint("delete", names.subjects.delete, registry.remove, WebhookRefRequest);
  endpoint("rotate", names.subjects.rotate, registry.rotate, WebhookRefRequest);
  endpoint("attempts", names.subjects.attempts, registry.attempts, WebhookAttemptsRequest);
  endpoint("replay", names.subjects.replay, registry.replay, WebhookReplayRequest);
  endpoint("enable", names.subjects.enable, registry.enable, WebhookRefRequest);
  return service;
}
