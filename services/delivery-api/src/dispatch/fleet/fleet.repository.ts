/**
 * The fleet outbox: every change of a vehicle or of its active round writes the vehicle's new
 * FLEET entry (or its deletion) here, in the transaction of the change. The relay
 * (fleet.relay.ts) puts the entries into the KV bucket in id order, so the bucket ends up exactly
 * as the database says, even across crashes.
 */
import { type FleetEntry, fleetKey, formatTimestamp } from "@dos/contracts";
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";

export const FLEET_CHANNEL = "delivery_fleet";

interface FleetRow {
  id: number;
  external_id: string;
  provider: string;
  provider_token_sha256: string | null;
  round_id: number | null;
  messenger_id: number | null;
}

/**
 * The current entries of the given vehicles (all when `vehicleIds` is "all"). Callers lock the
 * vehicle rows first, so what is read here is what the next committed change will see.
 */
export async function currentFleetEntries(db: Db, vehicleIds: number[] | "all") {
  let query = db
    .selectFrom("vehicles as v")
    .leftJoin("rounds as r", (join) => join.onRef("r.vehicle_id", "=", "v.id").on("r.status", "=", "active"))
    .select([
      "v.id",
      "v.external_id",
      "v.provider",
      "v.provider_token_sha256",
      "r.id as round_id",
      "r.messenger_id as messenger_id",
    ]);
  if (vehicleIds !== "all") query = query.where("v.id", "in", vehicleIds.length > 0 ? vehicleIds : [0]);
  const rows: FleetRow[] = await query.orderBy("v.id").execute();
  const now = formatTimestamp(new Date());
  return rows.map((row) => ({
    key: fleetKey(row.external_id),
    entry: {
      vehicle_external_id: row.external_id,
      vehicle_id: row.id,
      provider: row.provider,
      provider_token_sha256: row.provider_token_sha256,
      active_round_id: row.round_id,
      messenger_id: row.messenger_id,
      updated_at: now,
    } satisfies FleetEntry,
  }));
}

/** Locks vehicle rows until the transaction ends; every fleet-changing write takes it first. */
export async function lockVehicles(db: Db, vehicleIds: number[] | "all", mode: "update" | "share" = "update") {
  let query = db.selectFrom("vehicles").select("id");
  if (vehicleIds !== "all") query = query.where("id", "in", vehicleIds.length > 0 ? vehicleIds : [0]);
  query = mode === "update" ? query.forUpdate() : query.forShare();
  return query.execute();
}

/** Records the entries to put (entry) or keys to delete (null), and wakes the relay at commit. */
export async function appendFleetChanges(db: Db, changes: Array<{ key: string; entry: FleetEntry | null }>) {
  if (changes.length === 0) return;
  await db
    .insertInto("fleet_outbox")
    .values(changes.map((c) => ({ fleet_key: c.key, entry: c.entry ? JSON.stringify(c.entry) : null })))
    .execute();
  await sql`select pg_notify(${FLEET_CHANNEL}, '')`.execute(db);
}

/** Writes the current entries of these vehicles to the outbox (call after the change). */
export async function recordFleetState(db: Db, vehicleIds: number[]) {
  await appendFleetChanges(db, await currentFleetEntries(db, vehicleIds));
}

/** Whether any change waits (the partial index of unpublished rows): what a poll asks before a pass. */
export async function hasUnpublishedFleetChanges(db: Db): Promise<boolean> {
  const { rows } = await sql<{ waiting: boolean }>`
    select exists (select 1 from fleet_outbox where published_at is null) as waiting
  `.execute(db);
  return rows[0]?.waiting === true;
}

export function unpublishedFleetChanges(db: Db, limit: number) {
  return db
    .selectFrom("fleet_outbox")
    .select(["id", "fleet_key", sql<string | null>`entry::text`.as("entry")])
    .where("published_at", "is", null)
    .orderBy("id")
    .limit(limit)
    .execute();
}

export async function markFleetPublished(db: Db, ids: number[]) {
  if (ids.length === 0) return;
  await db.updateTable("fleet_outbox").set({ published_at: sql`now()` }).where("id", "in", ids).execute();
}

/** One fleet relay publishes at a time across replicas, so a key's changes stay in order. */
export async function tryFleetRelayLock(db: Db): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`
    select pg_try_advisory_xact_lock(hashtext('delivery-api.fleet-relay')) as locked
  `.execute(db);
  return rows[0]?.locked === true;
}

/** The same lock, waiting for a pass in progress to finish (for callers that must see their changes out). */
export async function waitFleetRelayLock(db: Db): Promise<true> {
  await sql`select pg_advisory_xact_lock(hashtext('delivery-api.fleet-relay'))`.execute(db);
  return true;
}
