/** Reads and writes of vehicle_positions: the same SQL in both storage modes. */
import type { Database } from "@dos/service-kit";
import type { Kysely } from "kysely";
import type { DB, PositionRow } from "./positions.table.ts";

// The batch as a relation: eight arrays whatever its size, so each plan is prepared once.
const BATCH = `unnest(
      $1::text[], $2::timestamptz[], $3::timestamptz[], $4::bigint[], $5::text[], $6::bigint[], $7::float8[], $8::float8[]
    )`;
const COLUMNS = "v, r, rc, rd, p, t, lat, lon";

const INSERT_BATCH = {
  name: "geo_insert_positions",
  text: `
    insert into vehicle_positions
      (vehicle_external_id, recorded_at, received_at, round_id, provider, tracker_id, latitude, longitude)
    select v, r, rc, rd, p, t, lat, lon
    from ${BATCH} as batch (${COLUMNS})
    on conflict do nothing`,
};

// A stored position is the same position when it has the same place: provider and tracker_id
// are not compared (the provider is checked against the fleet; tracker_id is for debugging).
const FIND_STORED = {
  name: "geo_find_stored_positions",
  text: `
    select batch.i::int4 as i
    from ${BATCH} with ordinality as batch (${COLUMNS}, i)
    join vehicle_positions s on s.vehicle_external_id = batch.v and s.recorded_at = batch.r
    where s.latitude = batch.lat and s.longitude = batch.lon`,
};

/** Element types of the arrays, as PostgreSQL's binary array format names them (pg_type oids). */
const OID = { int8: 20, text: 25, float8: 701, timestamptz: 1184 } as const;
/** PostgreSQL's binary timestamps count microseconds from 2000-01-01T00:00:00Z. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const HEADER_BYTES = 20;
const TWO_POW_32 = 2 ** 32;
const TWO_POW_63 = 2 ** 63;

/**
 * A number no bigint column holds. It fails its statement as PostgreSQL would have failed it
 * (SQLSTATE 22003, numeric value out of range), so the writer isolates the row the same way.
 */
class OutOfRange extends Error {
  readonly code = "22003";
  constructor(value: number) {
    super(`${value} is out of range for type bigint`);
  }
}

/**
 * One-dimensional arrays in PostgreSQL's binary format (array_recv): a header, then each
 * element as its length and its bytes (length -1 for NULL). node-postgres sends a Buffer
 * parameter as binary, so numbers and times reach the server as their bytes, with no text to
 * format here nor to parse there.
 */
class BinaryArray {
  readonly buffer: Buffer;
  readonly oid: number;
  readonly count: number;
  offset = HEADER_BYTES;
  hasNull = false;

  constructor(oid: number, count: number, capacity: number) {
    this.oid = oid;
    this.count = count;
    this.buffer = Buffer.allocUnsafe(HEADER_BYTES + capacity);
  }

  float8(value: number) {
    this.buffer.writeInt32BE(8, this.offset);
    this.buffer.writeDoubleBE(value, this.offset + 4);
    this.offset += 12;
  }

  /** An integer as a 64-bit one (exact: a double holding an integer splits exactly in two halves). */
  int8(value: number) {
    if (!Number.isInteger(value) || Math.abs(value) >= TWO_POW_63) throw new OutOfRange(value);
    const high = Math.floor(value / TWO_POW_32);
    this.buffer.writeInt32BE(8, this.offset);
    this.buffer.writeInt32BE(high, this.offset + 4);
    this.buffer.writeUInt32BE(value - high * TWO_POW_32, this.offset + 8);
    this.offset += 12;
  }

  /** A Unix time in milliseconds (a fraction carries microseconds) as a timestamptz. */
  timestamptz(ms: number) {
    this.int8(Math.round((ms - PG_EPOCH_MS) * 1000));
  }

  /** Text: the capacity must allow 3 bytes of UTF-8 per UTF-16 code unit. */
  text(value: string) {
    const length = this.buffer.write(value, this.offset + 4, "utf8");
    this.buffer.writeInt32BE(length, this.offset);
    this.offset += 4 + length;
  }

  null() {
    this.buffer.writeInt32BE(-1, this.offset);
    this.offset += 4;
    this.hasNull = true;
  }

  finish(): Buffer {
    const { buffer } = this;
    buffer.writeInt32BE(1, 0); // dimensions
    buffer.writeInt32BE(this.hasNull ? 1 : 0, 4);
    buffer.writeInt32BE(this.oid, 8);
    buffer.writeInt32BE(this.count, 12); // length of the dimension
    buffer.writeInt32BE(1, 16); // its lower bound
    return buffer.subarray(0, this.offset);
  }
}

/** The batch's eight columns as binary arrays, built in one pass over the rows. */
function batchValues(rows: PositionRow[]): Buffer[] {
  const count = rows.length;
  let vehicleChars = 0;
  let providerChars = 0;
  for (let i = 0; i < count; i++) {
    const row = rows[i] as PositionRow;
    vehicleChars += row.vehicleExternalId.length;
    providerChars += row.provider.length;
  }
  const vehicles = new BinaryArray(OID.text, count, count * 4 + vehicleChars * 3);
  const recorded = new BinaryArray(OID.timestamptz, count, count * 12);
  const received = new BinaryArray(OID.timestamptz, count, count * 12);
  const rounds = new BinaryArray(OID.int8, count, count * 12);
  const providers = new BinaryArray(OID.text, count, count * 4 + providerChars * 3);
  const trackers = new BinaryArray(OID.int8, count, count * 12);
  const latitudes = new BinaryArray(OID.float8, count, count * 12);
  const longitudes = new BinaryArray(OID.float8, count, count * 12);
  for (let i = 0; i < count; i++) {
    const row = rows[i] as PositionRow;
    vehicles.text(row.vehicleExternalId);
    recorded.timestamptz(row.recordedMs);
    received.timestamptz(row.receivedMs);
    rounds.int8(row.roundId);
    providers.text(row.provider);
    if (row.trackerId === null) trackers.null();
    else trackers.int8(row.trackerId);
    latitudes.float8(row.latitude);
    longitudes.float8(row.longitude);
  }
  return [vehicles, recorded, received, rounds, providers, trackers, latitudes, longitudes].map((array) =>
    array.finish(),
  );
}

/**
 * Inserts a batch in one autocommit statement (committed, hence durable, when it returns);
 * rows whose vehicle and time are already stored are skipped. Returns how many rows were new.
 */
export async function insertPositions(pool: Database<unknown>["pool"], rows: PositionRow[]): Promise<number> {
  const result = await pool.query({ ...INSERT_BATCH, values: batchValues(rows) });
  return result.rowCount ?? 0;
}

/**
 * Which rows of a batch the table holds as they are (same vehicle, time and place): for each
 * row, true when it is stored, false when its vehicle and time hold another place or nothing.
 * Read after the insert committed, so rows committed by concurrent batches are seen too.
 */
export async function findStoredPositions(pool: Database<unknown>["pool"], rows: PositionRow[]): Promise<boolean[]> {
  const result = await pool.query<{ i: number }>({ ...FIND_STORED, values: batchValues(rows) });
  const stored = new Array<boolean>(rows.length).fill(false);
  for (const { i } of result.rows) stored[i - 1] = true;
  return stored;
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

export interface VehicleTrackPage {
  since?: Date | undefined;
  before?: Date | undefined;
  limit: number;
}

/**
 * A vehicle's stored positions, newest first: a backward scan of the unique key
 * (vehicle_external_id, recorded_at) in each partition or chunk the bounds leave, stopped at the
 * limit, so the cost follows the limit and not the history kept.
 */
export function listVehicleTrack(db: Kysely<DB>, vehicleExternalId: string, page: VehicleTrackPage) {
  let query = db
    .selectFrom("vehicle_positions")
    .select(["recorded_at", "received_at", "round_id", "provider", "tracker_id", "latitude", "longitude"])
    .where("vehicle_external_id", "=", vehicleExternalId);
  if (page.since) query = query.where("recorded_at", ">=", page.since);
  if (page.before) query = query.where("recorded_at", "<", page.before);
  return query.orderBy("recorded_at", "desc").limit(page.limit).execute();
}
