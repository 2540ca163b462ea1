/**
 * The outbox relay: publishes unpublished outbox rows to JetStream, in order, with the event id
 * as Nats-Msg-Id, then marks them published. A crash between publish and mark re-publishes the
 * same ids after restart, and the stream's duplicate window drops the copies.
 *
 * It wakes on PostgreSQL NOTIFY (sent by every commit that adds events to existing deliveries)
 * and polls as a fallback (a lost LISTEN connection, a NOTIFY sent while it was busy). Several
 * replicas may run it: a transaction-level advisory lock lets one publish at a time, so
 * per-delivery order holds.
 *
 * A new delivery's first event takes a shorter way: the process that committed it publishes it
 * (`publishCommitted`, with the others committed within `gatherMs`) and marks it a moment later
 * with others (one UPDATE per `markLingerMs`), with no NOTIFY, no relay pass, no read back. At a steady rate that saves
 * each create the wake-ups of a relay pass in this process and in PostgreSQL (lock, read, mark,
 * commit). Order still holds: nothing comes before a first event, and a relay publishing a later
 * event of the delivery takes the first one too while it is unmarked (relayTakes in
 * outbox.repository.ts), so the stream has it first, or has it twice and drops the copy
 * (duplicate window). A first event whose publisher died or failed is a relay's once older than
 * `firstEventGraceMs`.
 */

import { setTimeout } from "node:timers/promises";
import { SERVICE_NAMES } from "@dos/contracts";
import {
  contextFromTraceparent,
  createBatcher,
  type Database,
  natsTraceHeaders,
  type Span,
  SpanKind,
  SpanStatusCode,
  startSpan,
  tracingEnabled,
} from "@dos/service-kit";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import { createListenLoop } from "./listen-loop.ts";
import {
  markPublished,
  markPublishedAlone,
  OUTBOX_CHANNEL,
  type OutboxRow,
  relayHasWork,
  tryRelayLock,
  unpublishedEvents,
} from "./outbox.repository.ts";

type Pool = Database<unknown>["pool"];

export interface OutboxRelayOptions {
  db: Kysely<DB>;
  /** The pool a LISTEN connection is taken from. */
  pool: Pool;
  nc: NatsConnection;
  logger: Logger;
  pollMs: number;
  batchSize?: number;
  /**
   * How long a wake-up waits before publishing, so that the events of commits arriving close
   * together go out in one pass (one lock, one read, one mark) rather than one pass each; first
   * events handed to `publishCommitted` gather as long.
   */
  gatherMs?: number;
  /** How long published first events gather before one UPDATE marks them. */
  markLingerMs?: number;
  /** How old an unmarked first event must be before a relay takes it over from its publisher. */
  firstEventGraceMs?: number;
  /** Runs after a batch is published and before it is marked; tests throw here to simulate a crash. */
  beforeMark?: (ids: string[]) => Promise<void> | void;
}

export interface OutboxRelay {
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Publishes until nothing is left that a relay takes (or another replica holds the lock);
   * returns how many it published. A young first event is left to its publisher.
   */
  drain(): Promise<number>;
  /**
   * Publishes the first events of new deliveries this process has just committed (never before
   * their commit), then marks them. Does nothing while the relay is stopped: a relay takes them
   * once they are older than the grace.
   */
  publishCommitted(rows: OutboxRow[]): void;
}

/**
 * Defaults: an unmarked first event is taken over after 2 s; marks gather for 500 ms (at a steady
 * rate one UPDATE every half second, not one per group: a crash costs only re-publishes of that
 * half second, which the stream's duplicate window drops).
 */
const FIRST_EVENT_GRACE_MS = 2000;
const MARK_LINGER_MS = 500;

export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, logger } = options;
  const batchSize = options.batchSize ?? 200;
  const gatherMs = options.gatherMs ?? 10;
  const graceMs = options.firstEventGraceMs ?? FIRST_EVENT_GRACE_MS;
  const js: JetStreamClient = jetstream(options.nc);
  let running = false;
  // A failed mark only costs a duplicate publish later (dropped by the stream), so it is not retried.
  const marks = createBatcher<string, undefined>({
    handle: async (ids) => {
      await markPublishedAlone(db, options.pool, ids);
      return new Array(ids.length);
    },
    maxBatch: 1000,
    lingerMs: options.markLingerMs ?? MARK_LINGER_MS,
    onFailure: { policy: "reject" },
    onRejected: (error, items) => logger.warn({ err: error, events: items }, "marking published events failed"),
  });
  async function publishBatch(): Promise<{ published: number; more: boolean }> {
    return db.transaction().execute(async (trx) => {
      if (!(await tryRelayLock(trx))) return { published: 0, more: false };
      const rows = await unpublishedEvents(trx, batchSize, graceMs);
      const { published, failure } = await publishInOrder(rows);
      await options.beforeMark?.(published);
      await markPublished(trx, published);
      if (failure) logger.warn({ err: failure, published: published.length }, "outbox publish failed; will retry");
      return { published: published.length, more: !failure && rows.length === batchSize };
    });
  }

  /**
   * Publishes in waves holding at most one event per delivery: a wave's publishes leave together
   * (one write, their acks in one burst) instead of one round trip each, and each delivery's
   * events still reach the stream one after the other. After a wave with a failure it stops:
   * the failed events (and everything after them) are published again by a later pass.
   */
  async function publishInOrder(rows: OutboxRow[]): Promise<{ published: string[]; failure: unknown }> {
    const published: string[] = [];
    let start = 0;
    while (start < rows.length) {
      const deliveries = new Set<number>();
      let end = start;
      for (; end < rows.length; end++) {
        const deliveryId = (rows[end] as OutboxRow).delivery_id;
        if (deliveries.has(deliveryId)) break;
        deliveries.add(deliveryId);
      }
      const wave = rows.slice(start, end);
      const spans = tracingEnabled() ? wave.map(publishSpan) : undefined;
      const results = await Promise.allSettled(
        wave.map((row, i) =>
          js.publish(row.subject, row.event, { msgID: row.id, headers: natsTraceHeaders(spans?.[i]) }),
        ),
      );
      spans?.forEach((span, i) => {
        if (results[i]?.status === "rejected") span?.setStatus({ code: SpanStatusCode.ERROR });
        span?.end();
      });
      let failure: unknown;
      for (const [index, result] of results.entries()) {
        if (result.status === "fulfilled") published.push((wave[index] as OutboxRow).id);
        else failure ??= result.reason;
      }
      if (failure !== undefined) return { published, failure };
      start = end;
    }
    return { published, failure: undefined };
  }

  /**
   * The publish continues the trace of the change that wrote the event (its stored context is
   * the parent), so one trace runs from the HTTP request to the webhook POST.
   */
  function publishSpan(row: OutboxRow): Span | undefined {
    return startSpan(SERVICE_NAMES.deliveryApi, "delivery-events publish", {
      kind: SpanKind.PRODUCER,
      parent: contextFromTraceparent(row.traceparent),
      attributes: {
        "messaging.system": "nats",
        "messaging.destination.name": row.subject,
        "messaging.message.id": row.id,
      },
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
    pass: async () => {
      await setTimeout(gatherMs);
      // A poll that finds nothing costs one statement, not a transaction of four.
      if (!(await relayHasWork(db, graceMs))) return 0;
      return drain();
    },
  });

  // First events gather for gatherMs, as a relay pass's do, so that a steady trickle of creates
  // still reaches the stream (and webhook-dispatcher) a few at a time rather than one by one.
  const firstEvents = createBatcher<OutboxRow, undefined>({
    handle: async (rows) => {
      const { published, failure } = await publishInOrder(rows);
      for (const id of published) marks.add(id).catch(() => undefined);
      if (failure) logger.warn({ err: failure, events: rows.length }, "publishing new events failed; a relay will");
      return new Array(rows.length);
    },
    maxBatch: batchSize,
    lingerMs: gatherMs,
    onFailure: { policy: "reject" },
    onRejected: (error, items) => logger.warn({ err: error, events: items }, "publishing new events failed"),
  });

  function publishCommitted(rows: OutboxRow[]) {
    if (!running) return;
    for (const row of rows) firstEvents.add(row).catch(() => undefined);
  }

  return {
    async start() {
      running = true;
      loop.start();
    },
    async stop() {
      running = false;
      await loop.stop();
      await firstEvents.drain();
      await marks.drain();
    },
    drain,
    publishCommitted,
  };
}
