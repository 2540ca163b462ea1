/**
 * The PostgreSQL pool and Kysely instance of a service. Each service works in its own schema
 * (search_path), so its queries name tables without a schema and never see another's.
 */
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { type ConnectionCounts, createFairPool } from "./fair-connections.ts";

// Return BIGINT (int8) and NUMERIC as JavaScript numbers: ids and cents stay far below 2^53.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));
pg.types.setTypeParser(1700, (value) => Number.parseFloat(value));

export interface DatabaseOptions {
  url: string;
  schema: string;
  poolSize?: number;
  /** Name shown in pg_stat_activity. */
  applicationName: string;
}

export interface Database<DB> {
  db: Kysely<DB>;
  pool: pg.Pool;
  /** Throws when PostgreSQL does not answer. */
  check(): Promise<void>;
  /** Connections in use and queries waiting for one (fair-connections.ts). */
  connections(): ConnectionCounts;
  close(): Promise<void>;
}

/** How long a query waits for a connection, for its turn (fair-connections.ts) and again in pg's pool. */
const CONNECTION_WAIT_MS = 3000;

export function createDatabase<DB>(options: DatabaseOptions): Database<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    application_name: options.applicationName,
    options: `-c search_path=${options.schema},public`,
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    idleTimeoutMillis: 30_000,
    // A query waiting on a dead server fails instead of hanging a request.
    query_timeout: 15_000,
  });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on("error", () => {});
  // A client checked out (a transaction between two queries) that loses its server emits on
  // itself, where the pool no longer listens: without this the process crashes when PostgreSQL
  // stops. Its pending and next queries still fail, and the pool drops it on release.
  pool.on("connect", (client) => client.on("error", () => {}));
  const fair = createFairPool(pool, CONNECTION_WAIT_MS);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: fair.pool }) });
  let closed = false;
  return {
    db,
    pool,
    async check() {
      await pool.query("select 1");
    },
    connections: fair.connections,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      // Kysely ends the pool only if it ever ran a query; connections taken by `pool.query`
      // alone would otherwise keep the process alive until they idle out (30 s).
      if (!pool.ended) await pool.end();
    },
  };
}
