/**
 * Which partitions of DELIVERY_EVENTS this replica owns. The replicas share them evenly: every
 * WEBHOOKS_REBALANCE_INTERVAL_MS each counts the live replicas (the member locks held), and one
 * holding more than its share (partitions ÷ replicas, rounded up) releases the excess, while one
 * holding less takes free partitions. A partition is owned by exactly one replica at a time (its
 * advisory lock), and its owner alone sends its accounts' webhooks: that is what keeps each
 * delivery's order and each endpoint's concurrency limit without any coordination per webhook.
 *
 * Releasing hands the partition over cleanly: `onRelease` stops taking its events and waits for
 * the POSTs in flight before the lock goes. If the lock connection is lost, every partition is
 * lost with it (another replica may take them at once): this replica stops them without waiting,
 * then connects again and takes its share anew.
 */
import { DELIVERY_EVENT_PARTITIONS } from "@dos/contracts";
import type pg from "pg";
import type { Logger } from "pino";
import { countMembers, type LockClasses, lockClasses, tryLock, unlock } from "./partitions.repository.ts";

export interface PartitionOwnershipOptions {
  /** The pool a connection is taken from and kept for the locks. */
  pool: pg.Pool;
  namespace: string;
  intervalMs: number;
  logger: Logger;
  /** Starts the partition's work; a throw gives the partition back. */
  onAcquire(partition: number): Promise<void>;
  /** Stops the partition's work: resolves once nothing of it is in flight. */
  onRelease(partition: number): Promise<void>;
  /** Told after every change of the set owned. */
  onChange?(owned: number): void;
}

export interface PartitionOwnership {
  /** Joins the replicas and takes this replica's share before resolving. */
  start(): Promise<void>;
  /** Releases every partition (cleanly) and leaves. */
  stop(): Promise<void>;
  owned(): number[];
}

export function createPartitionOwnership(options: PartitionOwnershipOptions): PartitionOwnership {
  const { logger } = options;
  const classes: LockClasses = lockClasses(options.namespace);
  const owned = new Set<number>();
  /** Partitions whose work is still stopping: not taken again before it has. */
  const stopping = new Map<number, Promise<void>>();
  let client: pg.PoolClient | undefined;
  let lost = false;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let cycle: Promise<void> = Promise.resolve();
  // Where this replica starts looking for free partitions: replicas starting together then
  // mostly try different ones.
  let firstChoice = 0;

  const changed = () => options.onChange?.(owned.size);

  async function connect(): Promise<pg.PoolClient> {
    const connection = await options.pool.connect();
    // The locks end with the connection: stop sending at once, before another replica starts.
    const onLost = () => {
      if (lost || client !== connection) return;
      lost = true;
      void dropAll("the lock connection to PostgreSQL ended");
    };
    connection.on("error", onLost);
    connection.on("end", onLost);
    try {
      for (;;) {
        const member = Math.floor(Math.random() * 0x7fffffff);
        if (await tryLock(connection, classes.member, member)) {
          firstChoice = member % DELIVERY_EVENT_PARTITIONS;
          break;
        }
      }
    } catch (error) {
      connection.release(true);
      throw error;
    }
    lost = false;
    return connection;
  }

  /** Every partition is gone with the connection: stop them, and connect again at the next rebalance. */
  async function dropAll(reason: string) {
    const partitions = [...owned];
    if (partitions.length > 0) logger.warn({ partitions }, `partitions lost: ${reason}`);
    owned.clear();
    changed();
    client?.release(true);
    client = undefined;
    await Promise.all(partitions.map((p) => stopWork(p).catch(() => {})));
  }

  /** Stops a partition's work; until it has, the partition is not taken again. */
  function stopWork(partition: number): Promise<void> {
    const done = options.onRelease(partition).finally(() => stopping.delete(partition));
    stopping.set(partition, done);
    return done;
  }

  /** Hands partitions over: their work stops (together), then their locks go (one query at a time). */
  async function release(connection: pg.PoolClient, partitions: number[]) {
    for (const partition of partitions) owned.delete(partition);
    changed();
    await Promise.all(partitions.map(stopWork));
    for (const partition of partitions) await unlock(connection, classes.partition, partition);
  }

  async function rebalance() {
    client ??= await connect();
    const connection = client;
    const members = await countMembers(connection, classes.member);
    const share = Math.ceil(DELIVERY_EVENT_PARTITIONS / Math.max(1, members));
    if (owned.size > share) {
      const excess = [...owned].sort((a, b) => b - a).slice(0, owned.size - share);
      logger.info({ partitions: excess, replicas: members }, "releasing partitions to other replicas");
      await release(connection, excess);
      return;
    }
    for (let i = 0; i < DELIVERY_EVENT_PARTITIONS && owned.size < share && running; i++) {
      const partition = (firstChoice + i) % DELIVERY_EVENT_PARTITIONS;
      if (owned.has(partition) || stopping.has(partition)) continue;
      if (!(await tryLock(connection, classes.partition, partition))) continue;
      try {
        await options.onAcquire(partition);
        if (client !== connection) {
          // The connection (and the lock with it) was lost while the partition started.
          await stopWork(partition);
          return;
        }
        owned.add(partition);
        changed();
        logger.info({ partition, replicas: members }, "partition taken");
      } catch (error) {
        logger.warn({ err: error, partition }, "cannot start a partition; giving it back");
        await unlock(connection, classes.partition, partition);
      }
    }
  }

  /** One rebalance; after a failure the next one starts afresh. */
  function runCycle(): Promise<void> {
    cycle = rebalance().catch(async (error) => {
      // A lock query that failed may have lost the connection, and the locks with it.
      logger.warn({ err: error }, "cannot rebalance partitions; connecting again");
      if (client) await dropAll("a lock query failed");
    });
    return cycle;
  }

  function schedule() {
    if (!running) return;
    timer = setTimeout(() => void runCycle().finally(schedule), options.intervalMs);
  }

  return {
    async start() {
      if (running) return;
      running = true;
      await runCycle();
      schedule();
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      await cycle;
      const connection = client;
      if (connection && !lost) {
        await release(connection, [...owned]).catch(() => {});
        connection.release();
      } else {
        await dropAll("stopping");
      }
      client = undefined;
    },
    owned: () => [...owned],
  };
}
