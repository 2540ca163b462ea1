/**
 * Operator API for delivery zones: `POST` adds (or moves centroids), `PUT` replaces the whole
 * set, `DELETE` removes; each answers with the account's zones after the change.
 */
import { LIMITS } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { OPS_LIMITS, pathId } from "../http/request-input.ts";
import { getZones, removeZones, saveZones } from "./zones.service.ts";

const PostalCode = Type.String({ minLength: 1, maxLength: LIMITS.postalCode });
const Zone = Type.Object(
  {
    postal_code: PostalCode,
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
  },
  { title: "Zone", additionalProperties: false },
);
/** Every answer of these routes: the account's zones after the change, by postal code. */
const Zones = Type.Array(Zone);
const zonesBody = (minItems: number) =>
  Type.Object(
    { zones: Type.Array(Zone, { minItems, maxItems: OPS_LIMITS.zonesPerRequest }) },
    { additionalProperties: false },
  );
const AddZonesBody = zonesBody(1);
const ReplaceZonesBody = zonesBody(0);
type ZonesBody = Static<typeof AddZonesBody>;
const RemoveZonesBody = Type.Object(
  { postal_codes: Type.Array(PostalCode, { minItems: 1, maxItems: OPS_LIMITS.zonesPerRequest }) },
  { additionalProperties: false },
);
type RemoveZonesBody = Static<typeof RemoveZonesBody>;

interface AccountParams {
  accountId: string;
}

export async function zonesOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const { db } = options;
  const accountOf = (params: AccountParams) => pathId(params.accountId, "account");

  app.get<{ Params: AccountParams }>(
    "/accounts/:accountId/zones",
    { schema: { operationId: "zones.list", response: { 200: Zones }, summary: "List delivery zones" } },
    async (request) => getZones(db, accountOf(request.params)),
  );

  app.post<{ Params: AccountParams; Body: ZonesBody }>(
    "/accounts/:accountId/zones",
    {
      schema: {
        operationId: "zones.add",
        response: { 200: Zones },
        summary: "Add zones, or move the centroid of existing ones",
        body: AddZonesBody,
      },
    },
    async (request) => saveZones(db, accountOf(request.params), request.body.zones, false),
  );

  app.put<{ Params: AccountParams; Body: ZonesBody }>(
    "/accounts/:accountId/zones",
    {
      schema: {
        operationId: "zones.set",
        response: { 200: Zones },
        summary: "Replace all the account's zones with these (none clears them)",
        body: ReplaceZonesBody,
      },
    },
    async (request) => saveZones(db, accountOf(request.params), request.body.zones, true),
  );

  app.delete<{ Params: AccountParams; Body: RemoveZonesBody }>(
    "/accounts/:accountId/zones",
    {
      schema: {
        operationId: "zones.remove",
        response: { 200: Zones },
        summary: "Remove zones (all or none)",
        body: RemoveZonesBody,
      },
    },
    async (request) => removeZones(db, accountOf(request.params), request.body.postal_codes),
  );

  app.delete<{ Params: AccountParams & { postalCode: string } }>(
    "/accounts/:accountId/zones/:postalCode",

    { schema: { operationId: "zones.remove-one", response: { 200: Zones }, summary: "Remove one zone" } },
    async (request) => removeZones(db, accountOf(request.params), [request.params.postalCode], true),
  );
}
