/**
 * A service's PostgreSQL connections, handed out in turn between tenants. pg's pool serves
 * waiters in order of asking, so one account's burst (within its rate limit: 100 list calls at
 * once, two queries each) queued every other account's queries behind its own. Here each
 * tenant waiting has its own queue, and a freed connection goes to the next tenant in turn:
 * another tenant waits for one connection to come free, not for the burst.
 *
 * The tenant is the async context's, set by `runAsTenant` (a route's hook, once the caller is
 * known). Work outside any tenant (background loops, unauthenticated requests) is one tenant of
 * its own, "".
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";

const tenantStorage = new AsyncLocalStorage<string>();

/** Runs `fn`, and everything it starts, on behalf of `tenant`. */
export function runAsTenant<T>(tenant: string, fn: () => T): T {
  return tenantStorage.run(tenant, fn);
}

/** The tenant the current async context acts for; undefined outside any. */
export function currentTenant(): string | undefined {
  return tenantStorage.getStore();
}

type Grant = (granted: boolean) => void;

/**
 * At most `max` connections out at once; waiters are queued per tenant, and tenants are served
 * in turn (a Map keeps insertion order: a tenant served goes to the back).
 */
function createTurns(max: number) {
  let out = 0;
  const waiting = new Map<string, Grant[]>();
  const next = (): Grant | undefined => {
    const first = waiting.entries().next();
    if (first.done) return undefined;
    const [tenant, queue] = first.value;
    waiting.delete(tenant);
    if (queue.length > 1) waiting.set(tenant, queue);
    return queue.shift();
  };
  return {
    /** Resolves true once the caller may take a connection, false after `timeoutMs`. */
    take(tenant: string, timeoutMs: number): Promise<boolean> | true {
      if (out < max && waiting.size === 0) {
        out++;
        return true;
      }
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          const queue = waiting.get(tenant);
          const at = queue?.indexOf(grant) ?? -1;
          if (queue && at >= 0) queue.splice(at, 1);
          if (queue?.length === 0) waiting.delete(tenant);
          resolve(false);
        }, timeoutMs);
        const grant: Grant = (granted) => {
          clearTimeout(timer);
          resolve(granted);
        };
        const queue = waiting.get(tenant);
        if (queue) queue.push(grant);
        else waiting.set(tenant, [grant]);
      });
    },
    /** Read at a scrape only: the waiters are counted then. */
    counts(): ConnectionCounts {
      let waiters = 0;
      for (const queue of waiting.values()) waiters += queue.length;
      return { inUse: out, waiting: waiters, tenantsWaiting: waiting.size };
    },
    /** A connection came back: the next tenant in turn gets it. */
    give() {
      const grant = next();
      if (grant) grant(true);
      else out--;
    },
  };
}

/** What the connections are doing now (the kit's `db_connection*` gauges). */
export interface ConnectionCounts {
  /** Handed out to queries: the pool's size at most. */
  inUse: number;
  /** Queries waiting for one. */
  waiting: number;
  /** Tenants with a query waiting: one with many waiters is one account's burst. */
  tenantsWaiting: number;
}

export interface FairPool {
  /** The pool as Kysely sees it. */
  pool: PostgresPool;
  connections(): ConnectionCounts;
}

/**
 * `connect` waits for the tenant's turn, then takes one of the pool's connections. A wait past
 * `waitTimeoutMs` fails as pg's own connection timeout does (the kit answers 503).
 */
export function createFairPool(pool: pg.Pool, waitTimeoutMs: number): FairPool {
  const turns = createTurns(pool.options.max);
  const kyselyPool = {
    async connect(): Promise<PostgresPoolClient> {
      const turn = turns.take(currentTenant() ?? "", waitTimeoutMs);
      if (turn !== true && !(await turn)) throw new Error("timeout exceeded when trying to connect");
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        turns.give();
        throw error;
      }
      // The pool gives each checkout a release of its own: this one also passes the turn on.
      const release = client.release;
      client.release = (error?: Error | boolean) => {
        release(error);
        turns.give();
      };
      return client;
    },
    end: () => pool.end(),
    // Kysely cancels a query through a separate client made with these.
    get Client() {
      return (pool as unknown as { Client: unknown }).Client;
    },
    get options() {
      return pool.options;
    },
  } as PostgresPool;
  return { pool: kyselyPool, connections: turns.counts };
}
