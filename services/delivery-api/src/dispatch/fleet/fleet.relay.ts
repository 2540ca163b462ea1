/**
 * The fleet relay: puts the fleet outbox's entries into the FLEET KV bucket (or deletes keys)
 * in id order, then marks them published. Woken by NOTIFY at each commit that adds changes, so
 * geo-ingest sees a round start or end within milliseconds; polls as a fallback. A crash between
 * put and mark puts the same entry again: harmless, a put is idempotent.
 */
import { natsNames } from "@dos/contracts";
import type { Database } from "@dos/service-kit";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../../db/database.ts";
import { createListenLoop } from "../../outbox/listen-loop.ts";
import {
  appendFleetChanges,
  currentFleetEntries,
  FLEET_CHANNEL,
  hasUnpublishedFleetChanges,
  lockVehicles,
  markFleetPublished,
  tryFleetRelayLock,
  unpublishedFleetChanges,
  waitFleetRelayLock,
} from "./fleet.repository.ts";

export interface FleetRelayOptions {
  db: Kysely<DB>;
  pool: Database<unknown>["pool"];
  nc: NatsConnection;
  namespace: string;
  logger: Logger;
  pollMs: number;
}

export interface FleetRelay {
  start(): void;
  stop(): Promise<void>;
  /** Publishes until nothing is left; returns how many changes it applied. */
  drain(): Promise<number>;
  /** Rewrites every vehicle's entry from the database and deletes keys of vehicles that do not exist. */
  rebuild(): Promise<Static<typeof FleetRebuilt>>;
}

export const FleetRebuilt = Type.Object(
  {
    vehicles: Type.Integer({ description: "Entries written." }),
    deleted: Type.Integer({ description: "Keys of vehicles that no longer exist, deleted." }),
  },
  { title: "FleetRebuilt" },
);

const BATCH = 500;

export function createFleetRelay(options: FleetRelayOptions): FleetRelay {
  const { db, logger } = options;
  const bucket = natsNames(options.namespace).buckets.fleet;
  let kv: KV | undefined;
  const openKv = async () => {
    kv ??= await new Kvm(options.nc).open(bucket);
    return kv;
  };

  /** `wait`: wait for another pass holding the lock instead of leaving the work to it. */
  async function publishBatch(wait: boolean): Promise<{ applied: number; more: boolean }> {
    const store = await openKv();
    return db.transaction().execute(async (trx) => {
      if (!(await (wait ? waitFleetRelayLock(trx) : tryFleetRelayLock(trx)))) return { applied: 0, more: false };
      const rows = await unpublishedFleetChanges(trx, BATCH);
      // Only the last change of a key in the batch matters: the earlier ones are superseded.
      const last = new Map<string, number>();
      for (const [index, row] of rows.entries()) last.set(row.fleet_key, index);
      const done: number[] = [];
      let failure: unknown;
      for (const [index, row] of rows.entries()) {
        try {
          if (last.get(row.fleet_key) === index) {
            if (row.entry === null) await store.delete(row.fleet_key);
            else await store.put(row.fleet_key, row.entry);
          }
          done.push(row.id);
        } catch (error) {
          failure = error;
          break;
        }
      }
      await markFleetPublished(trx, done);
      if (failure) logger.warn({ err: failure, applied: done.length }, "fleet put failed; will retry");
      return { applied: done.length, more: !failure && rows.length === BATCH };
    });
  }

  async function drain(wait = false): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await publishBatch(wait);
      total += batch.applied;
      if (!batch.more) return total;
    }
  }

  const loop = createListenLoop({
    pool: options.pool,
    channel: FLEET_CHANNEL,
    pollMs: options.pollMs,
    logger,
    // A poll that finds nothing costs one statement, not a transaction of four.
    pass: async () => ((await hasUnpublishedFleetChanges(db)) ? drain() : 0),
  });

  return {
    start: () => loop.start(),
    stop: () => loop.stop(),
    drain,
    async rebuild() {
      const store = await openKv();
      const existing = new Set<string>();
      for await (const key of await store.keys()) existing.add(key);
      const result = await db.transaction().execute(async (trx) => {
        // Share locks wait for changes in flight; the entries below are read after they commit.
        await lockVehicles(trx, "all", "share");
        const entries = await currentFleetEntries(trx, "all");
        const keep = new Set(entries.map((e) => e.key));
        const gone = [...existing].filter((key) => !keep.has(key)).map((key) => ({ key, entry: null }));
        await appendFleetChanges(trx, [...entries, ...gone]);
        return { vehicles: entries.length, deleted: gone.length };
      });
      // The relay woken by this commit may hold the lock: wait for it, so the bucket is rebuilt
      // when the answer goes out.
      await drain(true);
      return result;
    },
  };
}
