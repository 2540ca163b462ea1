/** Client API: `GET /api/v2/package_types`, the caller's catalogue (archived entries left out). */
import { PackageType } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { listClientPackageTypes } from "./package-types.service.ts";

export async function packageTypesRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const { db } = options;
  app.get(
    "/package_types",
    {
      schema: {
        operationId: "package-types.list",
        summary: "List package types",
        description: "The package types configured for the account, usable as `package_type_id` in packages.",
        tags: ["package types"],
        response: { 200: Type.Array(PackageType) },
      },
    },
    async (request) => listClientPackageTypes(db, request.account.id),
  );
}
