/** The operator API's features, mounted by app.ts inside the /ops/v1 context (bearer guard first). */
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { accountsOpsRoutes } from "../accounts/accounts.ops-routes.ts";
import type { DB } from "../db/database.ts";
import { packageTypesOpsRoutes } from "../package-types/package-types.ops-routes.ts";
import { placesOpsRoutes } from "../places/places.ops-routes.ts";
import { zonesOpsRoutes } from "../zones/zones.ops-routes.ts";

export async function opsRoutes(ops: FastifyInstance, options: { db: Kysely<DB> }) {
  await ops.register(accountsOpsRoutes, options);
  await ops.register(placesOpsRoutes, options);
  await ops.register(packageTypesOpsRoutes, options);
  await ops.register(zonesOpsRoutes, options);
}
