/** Reads and writes of vehicle_positions: the same SQL in both storage modes. */
import type { Database } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { DB, PositionRow } from "./positions.table.ts";

// One statement whatever the batch size: eight arrays, so the plan is prepared once and reused.
// Times travel as epoch milliseconds: exact, and cheaper to format than ISO text.
const INSERT_BATCH = {
  name: "geo_insert_positions",
  text: `
    insert into vehicle_positions
      (vehicle_external_id, recorded_at, received_at, round_id, provider, tracker_id, latitude, longitude)
    select v, to_timestamp(r / 1000.0), to_timestamp(rc / 1000.0), rd, p, t, lat, lon
    from unnest(
      $1::text[], $2::float8[], $3::float8[], $4::bigint[], $5::text[], $6::bigint[], $7::float8[], $8::float8[]
    ) as batch (v, r, rc, rd, p, t, lat, lon)
    on conflict do nothing`,
};

/** An element of a PostgreSQL array literal: always quoted, so no text is read as NULL. */
const quoted = (text: string) => (/["\\]/.test(text) ? `"${text.replace(/["\\]/g, "\\$&")}"` : `"${text}"`);

/**
 * Inserts a batch in one autocommit statement (committed, hence durable, when it returns);
 * duplicates of stored positions are skipped. Returns how many rows were new. The arrays are
 * written as literals, built in one pass over the rows: a fraction of pg's generic array
 * serialisation, and no intermediate array per column.
 */
export async function insertPositions(pool: Database<unknown>["pool"], rows: PositionRow[]): Promise<number> {
  let vehicles = "";
  let recorded = "";
  let received = "";
  let rounds = "";
  let providers = "";
  let trackers = "";
  let latitudes = "";
  let longitudes = "";
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as PositionRow;
    const sep = i === 0 ? "" : ",";
    vehicles += sep + quoted(row.vehicleExternalId);
    recorded += sep + row.recordedMs;
    received += sep + row.receivedMs;
    rounds += sep + row.roundId;
    providers += sep + quoted(row.provider);
    trackers += sep + (row.trackerId ?? "NULL");
    latitudes += sep + row.latitude;
    longitudes += sep + row.longitude;
  }
  const values = [vehicles, recorded, received, rounds, providers, trackers, latitudes, longitudes].map(
    (items) => `{${items}}`,
  );
  const result = await pool.query({ ...INSERT_BATCH, values });
  return result.rowCount ?? 0;
}

export interface TrackPage {
  after?: Date;
  limit: number;
}

/** A round's stored positions in time order, from `after` (exclusive) on. */
export function listRoundTrack(db: Kysely<DB>, roundId: number, page: TrackPage) {
  let query = db
    .selectFrom("vehicle_positions")
    .select(["vehicle_external_id", "recorded_at", "received_at", "provider", "tracker_id", "latitude", "longitude"])
    .where("round_id", "=", roundId);
  if (page.after) query = query.where("recorded_at", ">", page.after);
  return query.orderBy("recorded_at").orderBy("vehicle_external_id").limit(page.limit).execute();
}
