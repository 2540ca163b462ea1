/** Reads and writes of vehicle_positions: the same SQL in both storage modes. */
import type { Database } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { DB, PositionRow } from "./positions.table.ts";

// One statement whatever the batch size: eight arrays, so the plan is prepared once and reused.
const INSERT_BATCH = {
  name: "geo_insert_positions",
  text: `
    insert into vehicle_positions
      (vehicle_external_id, recorded_at, received_at, round_id, provider, tracker_id, latitude, longitude)
    select * from unnest(
      $1::text[], $2::timestamptz[], $3::timestamptz[], $4::bigint[], $5::text[], $6::bigint[],
      $7::float8[], $8::float8[]
    )
    on conflict do nothing`,
};

/**
 * Inserts a batch in one autocommit statement (committed, hence durable, when it returns);
 * duplicates of stored positions are skipped. Returns how many rows were new.
 */
export async function insertPositions(pool: Database<unknown>["pool"], rows: PositionRow[]): Promise<number> {
  const columns: unknown[][] = [[], [], [], [], [], [], [], []];
  const [vehicles, recorded, received, rounds, providers, trackers, latitudes, longitudes] = columns as [
    string[],
    string[],
    string[],
    number[],
    string[],
    Array<number | null>,
    number[],
    number[],
  ];
  for (const row of rows) {
    vehicles.push(row.vehicleExternalId);
    recorded.push(new Date(row.recordedMs).toISOString());
    received.push(new Date(row.receivedMs).toISOString());
    rounds.push(row.roundId);
    providers.push(row.provider);
    trackers.push(row.trackerId);
    latitudes.push(row.latitude);
    longitudes.push(row.longitude);
  }
  const result = await pool.query({ ...INSERT_BATCH, values: columns });
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
