/**
 * What the delivery rules read from the account's catalogue: its default place and the saved
 * addresses, package types and zones a body names. Concurrent requests share one query (see
 * batcher.ts): one row per request, each scoped to its own account. What the catalogue cache
 * (catalogue-cache.ts) holds is not read again: such a create reads nothing before it is priced.
 */
import { createBatcher, type Pool, runNamed } from "@dos/service-kit";
import { type Kysely, sql } from "kysely";
import type { DB } from "../db/database.ts";
import type { CatalogueCache } from "./catalogue-cache.ts";
import type { PlaceData } from "./delivery-draft.ts";
import type { BodyReferences, CatalogueType } from "./rule-context.ts";

export interface Catalogue {
  defaultPlace: PlaceData | null;
  savedAddresses: Map<number, PlaceData>;
  packageTypes: Map<number, CatalogueType>;
  zones: Map<string, { latitude: number; longitude: number }>;
}

export interface CatalogueRequest {
  accountId: number;
  refs: BodyReferences;
}

export interface CatalogueLoader {
  load(request: CatalogueRequest): Promise<Catalogue>;
}

export function createCatalogueLoader(db: Kysely<DB>, pool: Pool, cache?: CatalogueCache): CatalogueLoader {
  const batcher = createBatcher({
    handle: (requests: CatalogueRequest[]) => loadCatalogues(db, pool, requests),
    maxBatch: 100,
    concurrency: 4,
    // A request the catalogue query cannot serve fails alone, not the requests batched with it.
    onFailure: { policy: "isolate" },
  });
  return {
    async load(request) {
      const cached = cache?.lookup(request.accountId, request.refs);
      if (cached) return cached;
      const mark = cache?.mark() ?? 0;
      const catalogue = await batcher.add(request);
      cache?.store(request.accountId, catalogue, mark);
      return catalogue;
    },
  };
}

type PlaceRow = PlaceData & { id: number };
type ZoneRow = { postal_code: string; latitude: number; longitude: number };
type TypeRow = CatalogueType & { volume_dm3: number | string; weight_kg: number | string };

const PLACE_FIELDS = sql.raw(
  "recipient_name, recipient_phone, recipient_email, company_name, address, postal_code, city, " +
    "address_instructions, latitude, longitude",
);

/** The catalogue of each request, in order, in one round trip. */
async function loadCatalogues(db: Kysely<DB>, pool: Pool, requests: CatalogueRequest[]): Promise<Catalogue[]> {
  const input = requests.map((request, ord) => ({
    ord,
    account_id: request.accountId,
    saved_ids: request.refs.savedAddressIds,
    type_ids: request.refs.packageTypeIds,
    // As a text parameter would be: a lone surrogate cannot travel in JSON, U+FFFD can.
    postal_codes: request.refs.postalCodes.map((code) => code.toWellFormed()),
  }));
  const query = sql<{
    default_place: PlaceData | null;
    saved: PlaceRow[];
    types: TypeRow[];
    zones: ZoneRow[];
  }>`
    select
      (select to_jsonb(p) from (select ${PLACE_FIELDS} from places
        where account_id = r.account_id and kind = 'default') p) as default_place,
      (select coalesce(jsonb_agg(p), '[]') from (select id, ${PLACE_FIELDS} from places
        where account_id = r.account_id and kind = 'saved'
        and id in (select jsonb_array_elements_text(r.saved_ids)::bigint)) p) as saved,
      (select coalesce(jsonb_agg(t), '[]') from (select id, name, volume_dm3, weight_kg, fragility, temperature,
        is_size_category from package_types where account_id = r.account_id and archived_at is null
        and id in (select jsonb_array_elements_text(r.type_ids)::bigint)) t) as types,
      (select coalesce(jsonb_agg(z), '[]') from (select postal_code, latitude, longitude from delivery_zones
        where account_id = r.account_id
        and postal_code in (select jsonb_array_elements_text(r.postal_codes))) z) as zones
    from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as r(ord integer, account_id bigint,
      saved_ids jsonb, type_ids jsonb, postal_codes jsonb)
    order by r.ord
  `;
  const rows = await runNamed(db, pool, "delivery_catalogues", query);
  if (rows.length !== requests.length) throw new Error("catalogue query lost a request");
  return rows.map((row) => ({
    defaultPlace: row.default_place,
    savedAddresses: new Map(row.saved.map(({ id, ...place }) => [Number(id), place])),
    packageTypes: new Map(
      row.types.map((t) => [
        Number(t.id),
        { ...t, id: Number(t.id), volume_dm3: Number(t.volume_dm3), weight_kg: Number(t.weight_kg) },
      ]),
    ),
    zones: new Map(row.zones.map((z) => [z.postal_code, { latitude: z.latitude, longitude: z.longitude }])),
  }));
}
