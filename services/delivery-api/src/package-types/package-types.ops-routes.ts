/** Operator API for an account's package type catalogue; DELETE archives (types are never deleted). */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { pathId } from "../http/request-input.ts";
import {
  CatalogueEntry,
  CreatePackageTypeBody,
  ListPackageTypesQuery,
  UpdatePackageTypeBody,
} from "./package-types.schemas.ts";
import {
  archivePackageType,
  changePackageType,
  createPackageType,
  getPackageType,
  listOpsPackageTypes,
} from "./package-types.service.ts";

interface AccountParams {
  accountId: string;
}
interface TypeParams extends AccountParams {
  packageTypeId: string;
}

export async function packageTypesOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const { db } = options;
  const ids = (params: AccountParams & Partial<TypeParams>) => ({
    accountId: pathId(params.accountId, "account"),
    typeId: params.packageTypeId === undefined ? 0 : pathId(params.packageTypeId, "package type"),
  });

  app.get<{ Params: AccountParams; Querystring: ListPackageTypesQuery }>(
    "/accounts/:accountId/package_types",
    {
      schema: {
        operationId: "package-types.list",
        response: { 200: Type.Array(CatalogueEntry) },
        summary: "List the account's package types",
        querystring: ListPackageTypesQuery,
      },
    },
    async (request) => listOpsPackageTypes(db, ids(request.params).accountId, request.query.include_archived),
  );

  app.post<{ Params: AccountParams; Body: CreatePackageTypeBody }>(
    "/accounts/:accountId/package_types",
    {
      schema: {
        operationId: "package-types.create",
        response: { 201: CatalogueEntry },
        summary: "Add a package type to the account's catalogue",
        body: CreatePackageTypeBody,
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createPackageType(db, ids(request.params).accountId, request.body)),
  );

  app.get<{ Params: TypeParams }>(
    "/accounts/:accountId/package_types/:packageTypeId",

    { schema: { operationId: "package-types.get", response: { 200: CatalogueEntry }, summary: "Show a package type" } },
    async (request) => {
      const { accountId, typeId } = ids(request.params);
      return getPackageType(db, accountId, typeId);
    },
  );

  app.patch<{ Params: TypeParams; Body: UpdatePackageTypeBody }>(
    "/accounts/:accountId/package_types/:packageTypeId",
    {
      schema: {
        operationId: "package-types.update",
        response: { 200: CatalogueEntry },
        summary: "Change a package type (archived false restores it)",
        body: UpdatePackageTypeBody,
      },
    },
    async (request) => {
      const { accountId, typeId } = ids(request.params);
      return changePackageType(db, accountId, typeId, request.body);
    },
  );

  app.delete<{ Params: TypeParams }>(
    "/accounts/:accountId/package_types/:packageTypeId",

    {
      schema: {
        operationId: "package-types.archive",
        response: { 200: CatalogueEntry },
        summary: "Archive a package type (clients no longer see or use it)",
      },
    },
    async (request) => {
      const { accountId, typeId } = ids(request.params);
      return archivePackageType(db, accountId, typeId);
    },
  );
}
