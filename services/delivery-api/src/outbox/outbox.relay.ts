/**
 * The outbox relay: publishes unpublished outbox rows to JetStream, in order, with the event id
 * as Nats-Msg-Id, then marks them published. A crash between publish and mark re-publishes the
 * same ids after restart, and the stream's duplicate window drops the copies.
 *
 * It wakes on PostgreSQL NOTIFY (sent by every commit that adds events) and polls as a fallback
 * (a lost LISTEN connection, a NOTIFY sent while it was busy). Several replicas may run it: a
 * transaction-level advisory lock lets one publish at a time, so per-delivery order holds.
 */

import type { Database } from "@dos/service-kit";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import { createListenLoop } from "./listen-loop.ts";
import { markPublished, OUTBOX_CHANNEL, tryRelayLock, unpublishedEvents } from "./outbox.repository.ts";

type Pool = Database<unknown>["pool"];

export interface OutboxRelayOptions {
  db: Kysely<DB>;
  /** The pool a LISTEN connection is taken from. */
  pool: Pool;
  nc: NatsConnection;
  logger: Logger;
  pollMs: number;
  batchSize?: number;
  /** Runs after a batch is published and before it is marked; tests throw here to simulate a crash. */
  beforeMark?: (ids: string[]) => Promise<void> | void;
}

export interface OutboxRelay {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Publishes until nothing is left (or another replica holds the lock); returns how many it published. */
  drain(): Promise<number>;
}

export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, logger } = options;
  const batchSize = options.batchSize ?? 200;
  const js: JetStreamClient = jetstream(options.nc);
  async function publishBatch(): Promise<{ published: number; more: boolean }> {
    return db.transaction().execute(async (trx) => {
      if (!(await tryRelayLock(trx))) return { published: 0, more: false };
      const rows = await unpublishedEvents(trx, batchSize);
      const published: string[] = [];
      let failure: unknown;
      for (const row of rows) {
        try {
          await js.publish(row.subject, row.payload, { msgID: row.id });
          published.push(row.id);
        } catch (error) {
          // Stop at the first failure: publishing later events first would break their order.
          failure = error;
          break;
        }
      }
      await options.beforeMark?.(published);
      await markPublished(trx, published);
      if (failure) logger.warn({ err: failure, published: published.length }, "outbox publish failed; will retry");
      return { published: published.length, more: !failure && rows.length === batchSize };
    });
  }

  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await publishBatch();
      total += batch.published;
      if (!batch.more) return total;
    }
  }

  const loop = createListenLoop({
    pool: options.pool,
    channel: OUTBOX_CHANNEL,
    pollMs: options.pollMs,
    logger,
    pass: drain,
  });

  return {
    async start() {
      loop.start();
    },
    stop: () => loop.stop(),
    drain,
  };
}
