/**
 * The delivery endpoints of the client API (/api/v2), as the spec shows them, plus quote. Bodies
 * are validated at the edge with the contracts schemas, which also feed the OpenAPI document.
 */
import {
  DELIVERY_LIST_DEFAULT_PER_PAGE,
  DELIVERY_TIMELINE_MAX_EVENTS,
  Delivery,
  DeliveryCreateInput,
  DeliveryListItem,
  DeliveryListQuery,
  DeliveryPrice,
  DeliveryQuote,
  DeliveryTimelineEvent,
  DeliveryUpdateInput,
  ErrorBody,
  isCalendarDay,
  RedeliveryInput,
} from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply } from "fastify";
import { type IdempotentResponse, idempotentRequest } from "../idempotency/idempotency.ts";
import { cancelTakesNoBody, notACalendarDay, rangeEndBeforeStart } from "./deliveries.errors.ts";
import type { DeliveriesService } from "./deliveries.service.ts";
import { DeliveryIdParams, deliveryIdOf } from "./delivery-id.ts";
import { paginationHeaders } from "./pagination.ts";
import type { RedeliveryService } from "./redelivery.service.ts";

export interface DeliveriesRoutesOptions {
  deliveries: DeliveriesService;
  redeliveries: RedeliveryService;
}

const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      description: "Any unique string (a UUID); a retry with the same key and body gets the first answer again.",
    }),
  ),
});
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
const tags = ["deliveries"];

function send(reply: FastifyReply, response: IdempotentResponse) {
  if (response.replayed) reply.header("idempotent-replayed", "true");
  return reply.code(response.status).send(response.body);
}

export async function deliveriesRoutes(app: FastifyInstance, options: DeliveriesRoutesOptions) {
  const { deliveries, redeliveries } = options;

  app.get(
    "/deliveries",
    {
      schema: {
        tags,
        operationId: "deliveries.list",
        summary: "List deliveries",
        description:
          "Newest first, by pages. `Link` (first, prev, next, last) and `X-Total-Count` describe the pages. " +
          "The status and day filters combine with the reference (all must match).",
        querystring: DeliveryListQuery,
        response: { 200: Type.Array(DeliveryListItem), ...errors(401, 422) },
      },
    },
    async (request, reply) => {
      const query = request.query as DeliveryListQuery;
      const page = query.page ?? 1;
      const perPage = query.per_page ?? DELIVERY_LIST_DEFAULT_PER_PAGE;
      for (const [from, to] of [
        ["created_from", "created_to"],
        ["slot_from", "slot_to"],
      ] as const) {
        const start = query[from];
        const end = query[to];
        for (const [name, value] of [
          [from, start],
          [to, end],
        ] as const) {
          if (value !== undefined && !isCalendarDay(value)) throw notACalendarDay(name);
        }
        if (start !== undefined && end !== undefined && end < start) throw rangeEndBeforeStart(from, to);
      }
      const filter = {
        reference: query.client_order_reference,
        status: query.status,
        createdFrom: query.created_from,
        createdTo: query.created_to,
        slotFrom: query.slot_from,
        slotTo: query.slot_to,
      };
      const { items, total } = await deliveries.list(request.account, { filter, page, perPage });
      reply.headers(paginationHeaders(request.url, { page, perPage, total }));
      return items;
    },
  );

  app.post(
    "/deliveries",
    {
      schema: {
        tags,
        operationId: "deliveries.create",
        summary: "Create a delivery",
        headers: IdempotencyHeaders,
        body: DeliveryCreateInput,
        response: { 201: Delivery, ...errors(401, 422, 503) },
      },
    },
    async (request, reply) => {
      const body = request.body as DeliveryCreateInput;
      const key = idempotentRequest(request, request.account.id, "create", body);
      return send(reply, await deliveries.create(request.account, body, key));
    },
  );

  app.post(
    "/deliveries/quote",
    {
      schema: {
        tags,
        operationId: "deliveries.quote",
        summary: "Price a delivery without creating it",
        description: "Takes a create body, applies every rule of create, and answers its price. Nothing is saved.",
        body: DeliveryCreateInput,
        response: { 200: DeliveryQuote, ...errors(401, 422, 503) },
      },
    },
    async (request) => deliveries.quote(request.account, request.body as DeliveryCreateInput),
  );

  app.get(
    "/deliveries/latest",
    {
      schema: {
        tags,
        operationId: "deliveries.latest",
        summary: "Get the latest delivery",
        querystring: Type.Pick(DeliveryListQuery, ["client_order_reference"]),
        response: { 200: Delivery, ...errors(401, 404, 422) },
      },
    },
    async (request) => deliveries.latest(request.account, (request.query as DeliveryListQuery).client_order_reference),
  );

  app.get(
    "/deliveries/:delivery_id",
    {
      attachValidation: true,
      schema: {
        tags,
        operationId: "deliveries.get",
        summary: "Get a delivery",
        params: DeliveryIdParams,
        response: { 200: Delivery, ...errors(401, 404) },
      },
    },
    async (request) => deliveries.get(request.account, deliveryIdOf(request)),
  );

  app.get(
    "/deliveries/:delivery_id/events",
    {
      attachValidation: true,
      schema: {
        tags,
        operationId: "deliveries.events",
        summary: "List a delivery's events (its status timeline)",
        description:
          "Beyond the spec: the events webhooks carry for this delivery (created, updated, status changes, " +
          `cancelled, redelivery), oldest first; the latest ${DELIVERY_TIMELINE_MAX_EVENTS} at most, kept as long ` +
          "as published events are (`API_OUTBOX_RETENTION_HOURS`).",
        params: DeliveryIdParams,
        response: { 200: Type.Array(DeliveryTimelineEvent), ...errors(401, 404) },
      },
    },
    async (request) => deliveries.timeline(request.account, deliveryIdOf(request)),
  );

  app.get(
    "/deliveries/:delivery_id/price",
    {
      attachValidation: true,
      schema: {
        tags,
        operationId: "deliveries.price",
        summary: "Get a delivery's price with its breakdown",
        description:
          "Beyond the spec: the price as quoted at the delivery's last change, the tariff version used and its " +
          "lines (the same lines as the monthly statement). `price_cents` and `tariff_id` are null when no " +
          "tariff was in force.",
        params: DeliveryIdParams,
        response: { 200: DeliveryPrice, ...errors(401, 404) },
      },
    },
    async (request) => deliveries.price(request.account, deliveryIdOf(request)),
  );

  for (const method of ["PATCH", "PUT"] as const) {
    app.route({
      method,
      url: "/deliveries/:delivery_id",
      attachValidation: true,
      schema: {
        tags,
        operationId: method === "PATCH" ? "deliveries.update" : "deliveries.replace",
        summary: "Update a delivery",
        description:
          "Only the fields to change; nested task and place fields may be partial. `packages`, when given, " +
          "replaces every package. Allowed while the delivery is saved or scheduled.",
        params: DeliveryIdParams,
        body: DeliveryUpdateInput,
        response: { 200: Delivery, ...errors(401, 404, 422, 503) },
      },
      handler: async (request) => {
        const id = deliveryIdOf(request);
        return deliveries.update(request.account, id, request.body as DeliveryUpdateInput);
      },
    });
  }

  app.patch(
    "/deliveries/:delivery_id/cancel",
    {
      attachValidation: true,
      schema: {
        tags,
        operationId: "deliveries.cancel",
        summary: "Cancel a delivery",
        description: "No body. Allowed while the delivery is saved or scheduled.",
        params: DeliveryIdParams,
        response: { 200: Delivery, ...errors(401, 404, 422) },
      },
    },
    async (request) => {
      const id = deliveryIdOf(request);
      const body = request.body;
      const empty = body === undefined || body === null || (isPlainObject(body) && Object.keys(body).length === 0);
      if (!empty) throw cancelTakesNoBody();
      return deliveries.cancel(request.account, id);
    },
  );

  app.post(
    "/deliveries/:delivery_id/redelivery",
    {
      attachValidation: true,
      schema: {
        tags,
        operationId: "deliveries.redeliver",
        summary: "Create a redelivery of a failed delivery",
        description:
          "Any delivery field to change; nested task and place fields may be partial. direction, packages, " +
          "reversed_packages and client_order_reference are ignored and kept from the original.",
        headers: IdempotencyHeaders,
        params: DeliveryIdParams,
        body: RedeliveryInput,
        response: { 201: Delivery, ...errors(401, 404, 422, 503) },
      },
    },
    async (request, reply) => {
      const id = deliveryIdOf(request);
      const body = (request.body ?? {}) as RedeliveryInput;
      const key = idempotentRequest(request, request.account.id, "redelivery", { delivery_id: id, body });
      return send(reply, await redeliveries.redeliver(request.account, id, body, key));
    },
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
