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
import { markPublished, OUTBOX_CHANNEL, tryRelayLock, unpublishedEvents } from "./outbox.repository.ts";

type Pool = Database<unknown>["pool"];
/** The part of a pooled connection the LISTEN side uses. */
interface ListenClient {
  query(text: string): Promise<unknown>;
  release(error?: Error): void;
  on(event: "notification", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
}

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
  let running = false;
  let loop: Promise<void> | undefined;
  let listener: ListenClient | undefined;
  let signalled = false;
  let wake: (() => void) | undefined;

  const signal = () => {
    signalled = true;
    wake?.();
  };

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

  async function listen() {
    if (listener) return;
    try {
      const client: ListenClient = await options.pool.connect();
      client.on("notification", signal);
      client.on("error", (error: Error) => {
        logger.warn({ err: error }, "outbox LISTEN connection lost; polling until it is back");
        if (listener === client) listener = undefined;
        client.release(error);
      });
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      listener = client;
    } catch (error) {
      logger.warn({ err: error }, "outbox relay cannot LISTEN; polling");
    }
  }

  function sleep(ms: number) {
    return new Promise<void>((resolve) => {
      if (signalled || !running) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  async function run() {
    while (running) {
      await listen();
      signalled = false;
      try {
        await drain();
      } catch (error) {
        logger.warn({ err: error }, "outbox relay pass failed; retrying");
      }
      await sleep(options.pollMs);
    }
  }

  return {
    async start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      loop = undefined;
      const client = listener;
      listener = undefined;
      if (client) {
        await client.query(`UNLISTEN ${OUTBOX_CHANNEL}`).catch(() => {});
        client.release();
      }
    },
    drain,
  };
}
