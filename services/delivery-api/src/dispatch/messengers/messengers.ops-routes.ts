/**
 * Messengers (the operator's couriers) under /ops/v1: create, list, show, rename. A messenger's
 * phone positions arrive through POST /messengers/{id}/positions (src/positions).
 */
import { ShortText } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { LinkHeader, nextPageLink, PageQuery } from "../../http/paging.ts";
import { pathId } from "../../http/request-input.ts";
import { createMessengersService, Messenger } from "./messengers.service.ts";

const MessengerBody = Type.Object(
  { name: ShortText(), phone: Type.Optional(Type.Union([ShortText(), Type.Null()])) },
  { additionalProperties: false },
);
type MessengerBody = Static<typeof MessengerBody>;
const MessengerPatch = Type.Partial(MessengerBody, { additionalProperties: false });

export async function messengersOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const messengers = createMessengersService(options.db);
  app.post<{ Body: MessengerBody }>(
    "/messengers",
    {
      schema: {
        operationId: "messengers.create",
        response: { 201: Messenger },
        summary: "Add a messenger",
        body: MessengerBody,
      },
    },
    async (request, reply) => reply.code(201).send(await messengers.create(request.body)),
  );

  app.get<{ Querystring: PageQuery }>(
    "/messengers",
    {
      schema: {
        operationId: "messengers.list",
        querystring: PageQuery,
        response: { 200: { ...Type.Array(Messenger), headers: LinkHeader } },
        summary: "List messengers, by id, in pages",
      },
    },
    async (request, reply) => {
      const page = await messengers.list(request.query);
      nextPageLink(request, reply, request.query, page.hasMore);
      return page.messengers;
    },
  );

  app.get<{ Params: { id: string } }>(
    "/messengers/:id",
    { schema: { operationId: "messengers.get", response: { 200: Messenger }, summary: "Show a messenger" } },
    (request) => messengers.get(pathId(request.params.id, "messenger")),
  );

  app.patch<{ Params: { id: string }; Body: Partial<MessengerBody> }>(
    "/messengers/:id",
    {
      schema: {
        operationId: "messengers.update",
        response: { 200: Messenger },
        summary: "Rename a messenger or change its phone",
        body: MessengerPatch,
      },
    },
    (request) => messengers.update(pathId(request.params.id, "messenger"), request.body ?? {}),
  );
}
