/**
 * Operator API for the account's default place (`PUT` creates or replaces it) and its saved
 * addresses, whose integer id is what a client may give as a task.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { pathId } from "../http/request-input.ts";
import { PlaceBody, PlacePatchBody, SavedPlace } from "./places.schemas.ts";
import {
  createSavedAddress,
  getDefaultPlace,
  getSavedAddress,
  listAddresses,
  patchSavedAddress,
  putDefaultPlace,
  removeSavedAddress,
} from "./places.service.ts";

interface AccountParams {
  accountId: string;
}
interface AddressParams extends AccountParams {
  addressId: string;
}

export async function placesOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const { db } = options;
  const accountOf = (params: AccountParams) => pathId(params.accountId, "account");
  const addressOf = (params: AddressParams) => pathId(params.addressId, "address");

  app.get<{ Params: AccountParams }>(
    "/accounts/:accountId/default_place",
    {
      schema: {
        operationId: "places.get-default",
        response: { 200: SavedPlace },
        summary: "Show the account's default place",
      },
    },
    async (request) => getDefaultPlace(db, accountOf(request.params)),
  );

  app.put<{ Params: AccountParams; Body: PlaceBody }>(
    "/accounts/:accountId/default_place",
    {
      schema: {
        operationId: "places.set-default",
        response: { 200: SavedPlace },
        summary: "Set (or replace) the account's default place",
        body: PlaceBody,
      },
    },
    async (request) => putDefaultPlace(db, accountOf(request.params), request.body),
  );

  app.get<{ Params: AccountParams }>(
    "/accounts/:accountId/addresses",
    {
      schema: {
        operationId: "addresses.list",
        response: { 200: Type.Array(SavedPlace) },
        summary: "List saved addresses",
      },
    },
    async (request) => listAddresses(db, accountOf(request.params)),
  );

  app.post<{ Params: AccountParams; Body: PlaceBody }>(
    "/accounts/:accountId/addresses",
    {
      schema: {
        operationId: "addresses.create",
        response: { 201: SavedPlace },
        summary: "Save an address (its id is what a task may be given as)",
        body: PlaceBody,
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createSavedAddress(db, accountOf(request.params), request.body)),
  );

  app.get<{ Params: AddressParams }>(
    "/accounts/:accountId/addresses/:addressId",
    { schema: { operationId: "addresses.get", response: { 200: SavedPlace }, summary: "Show a saved address" } },
    async (request) => getSavedAddress(db, accountOf(request.params), addressOf(request.params)),
  );

  app.patch<{ Params: AddressParams; Body: PlacePatchBody }>(
    "/accounts/:accountId/addresses/:addressId",
    {
      schema: {
        operationId: "addresses.update",
        response: { 200: SavedPlace },
        summary: "Change fields of a saved address (null clears an optional one)",
        body: PlacePatchBody,
      },
    },
    async (request) => patchSavedAddress(db, accountOf(request.params), addressOf(request.params), request.body),
  );

  app.delete<{ Params: AddressParams }>(
    "/accounts/:accountId/addresses/:addressId",

    {
      schema: {
        operationId: "addresses.delete",
        response: { 204: Type.Null({ description: "Deleted." }) },
        summary: "Delete a saved address",
      },
    },
    async (request, reply) => {
      await removeSavedAddress(db, accountOf(request.params), addressOf(request.params));
      return reply.code(204).send();
    },
  );
}
