/**
 * SQL of the delivery operations. Every query is scoped to the caller's account: another
 * account's delivery is simply not found.
 */
import { type Insertable, sql, type Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import type { DeliveriesTable, DeliveryPackagesTable, TaskKind, TasksTable } from "./deliveries.table.ts";
import type { PlaceData, StoredDelivery } from "./delivery-draft.ts";
import type { BodyReferences, CatalogueType } from "./rule-context.ts";

export interface Catalogue {
  /** The id and creation time of the delivery a create or redelivery is about to write. */
  stamp: NewDeliveryStamp | null;
  defaultPlace: PlaceData | null;
  savedAddresses: Map<number, PlaceData>;
  packageTypes: Map<number, CatalogueType>;
  zones: Map<string, { latitude: number; longitude: number }>;
}

export interface NewDeliveryStamp {
  id: number;
  createdAt: Date;
}

type PlaceRow = PlaceData & { id: number };
type ZoneRow = { postal_code: string; latitude: number; longitude: number };

const PLACE_FIELDS = sql.raw(
  "recipient_name, recipient_phone, recipient_email, company_name, address, postal_code, city, " +
    "address_instructions, latitude, longitude",
);

/**
 * The account's default place and the catalogue entries a body names, in one round trip; with
 * `stamp`, also the id and creation time (to the millisecond the API shows) of a new delivery,
 * so that it can be written in one statement without being read back.
 */
export async function loadCatalogue(
  db: Db,
  accountId: number,
  refs: BodyReferences,
  options: { stamp: boolean },
): Promise<Catalogue> {
  const { rows } = await sql<{
    new_id: number | null;
    created_at: Date;
    default_place: PlaceData | null;
    saved: PlaceRow[];
    types: Array<CatalogueType & { volume_dm3: number | string; weight_kg: number | string }>;
    zones: ZoneRow[];
  }>`
    select
      case when ${options.stamp} then nextval('deliveries_id_seq') end as new_id,
      date_trunc('milliseconds', now()) as created_at,
      (select to_jsonb(p) from (select ${PLACE_FIELDS} from places
        where account_id = ${accountId} and kind = 'default') p) as default_place,
      (select coalesce(jsonb_agg(p), '[]') from (select id, ${PLACE_FIELDS} from places
        where account_id = ${accountId} and kind = 'saved' and id = any(${refs.savedAddressIds}::bigint[])) p) as saved,
      (select coalesce(jsonb_agg(t), '[]') from (select id, name, volume_dm3, weight_kg, fragility, temperature,
        is_size_category from package_types where account_id = ${accountId} and archived_at is null
        and id = any(${refs.packageTypeIds}::bigint[])) t) as types,
      (select coalesce(jsonb_agg(z), '[]') from (select postal_code, latitude, longitude from delivery_zones
        where account_id = ${accountId} and postal_code = any(${refs.postalCodes}::text[])) z) as zones
  `.execute(db);
  const row = rows[0];
  if (!row) throw new Error("catalogue query returned no row");
  return {
    stamp: row.new_id === null ? null : { id: row.new_id, createdAt: row.created_at },
    defaultPlace: row.default_place,
    savedAddresses: new Map(row.saved.map(({ id, ...place }) => [Number(id), place])),
    packageTypes: new Map(
      row.types.map((t) => [
        Number(t.id),
        { ...t, id: Number(t.id), volume_dm3: Number(t.volume_dm3), weight_kg: Number(t.weight_kg) },
      ]),
    ),
    zones: new Map(row.zones.map((z) => [z.postal_code, { latitude: z.latitude, longitude: z.longitude }])),
  };
}

/** A delivery with its tasks and packages; `forUpdate` locks the delivery row until the transaction ends. */
export async function findDelivery(
  db: Db,
  accountId: number,
  id: number,
  options: { forUpdate?: boolean } = {},
): Promise<StoredDelivery | undefined> {
  let query = db.selectFrom("deliveries").selectAll().where("id", "=", id).where("account_id", "=", accountId);
  if (options.forUpdate) query = query.forUpdate();
  const delivery = await query.executeTakeFirst();
  if (!delivery) return undefined;
  return loadParts(db, delivery);
}

async function loadParts(db: Db, delivery: StoredDelivery["delivery"]): Promise<StoredDelivery> {
  const tasks = await db.selectFrom("tasks").selectAll().where("delivery_id", "=", delivery.id).execute();
  const packages = await db
    .selectFrom("delivery_packages")
    .selectAll()
    .where("delivery_id", "=", delivery.id)
    .orderBy("position")
    .execute();
  return { delivery, tasks, packages };
}

/** The newest delivery of the account (with that reference, when given). */
export async function findLatestDelivery(db: Db, accountId: number, reference: string | undefined) {
  let query = db.selectFrom("deliveries").selectAll().where("account_id", "=", accountId);
  if (reference !== undefined) query = query.where("client_order_reference", "=", reference);
  const delivery = await query.orderBy("id", "desc").limit(1).executeTakeFirst();
  return delivery ? loadParts(db, delivery) : undefined;
}

export interface ListFilter {
  accountId: number;
  reference: string | undefined;
  limit: number;
  offset: number;
}

/** A page of the list, newest first, with the slot of the main task (pickup when inbound, else dropoff). */
export function listDeliveries(db: Db, filter: ListFilter) {
  let query = db
    .selectFrom("deliveries as d")
    .innerJoin("tasks as t", (join) =>
      join
        .onRef("t.delivery_id", "=", "d.id")
        .on(sql<boolean>`t.kind = case when d.direction = 'inbound' then 'pickup' else 'dropoff' end`),
    )
    .select(["d.id", "d.created_at", "d.status", "d.price_cents", "t.slot_starting_at", "t.slot_ending_at"])
    .where("d.account_id", "=", filter.accountId);
  if (filter.reference !== undefined) query = query.where("d.client_order_reference", "=", filter.reference);
  return query.orderBy("d.id", "desc").limit(filter.limit).offset(filter.offset).execute();
}

export async function countDeliveries(db: Db, accountId: number, reference: string | undefined): Promise<number> {
  let query = db
    .selectFrom("deliveries")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("account_id", "=", accountId);
  if (reference !== undefined) query = query.where("client_order_reference", "=", reference);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}

type PackageValues = Omit<Insertable<DeliveryPackagesTable>, "delivery_id" | "position">;

function insertPackages(db: Db, deliveryId: number, packages: PackageValues[]) {
  return db
    .insertInto("delivery_packages")
    .values(packages.map((p, position) => ({ ...p, delivery_id: deliveryId, position })))
    .returningAll()
    .execute();
}

export function updateDeliveryRow(db: Db, id: number, values: Updateable<DeliveriesTable>) {
  return db
    .updateTable("deliveries")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateTask(db: Db, deliveryId: number, kind: TaskKind, values: Updateable<TasksTable>) {
  return db
    .updateTable("tasks")
    .set(values)
    .where("delivery_id", "=", deliveryId)
    .where("kind", "=", kind)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Replaces every package of a delivery (an update's `packages` replaces the whole array). */
export async function replacePackages(db: Db, deliveryId: number, packages: PackageValues[]) {
  await db.deleteFrom("delivery_packages").where("delivery_id", "=", deliveryId).execute();
  return insertPackages(db, deliveryId, packages);
}

/** Locks the delivery row for the rest of the transaction; returns its status and event sequence. */
export function lockDelivery(db: Db, accountId: number, id: number) {
  return db
    .selectFrom("deliveries")
    .select(["status", "event_sequence", "redelivery_id"])
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .forUpdate()
    .executeTakeFirst();
}
