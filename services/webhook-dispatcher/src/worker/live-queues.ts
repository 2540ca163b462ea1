/**
 * The stream path: webhooks of events just taken from the stream, sent from memory. The
 * webhooks of one (endpoint, delivery) form a queue here too, sent one at a time in sequence
 * order; different deliveries go side by side, as far as the send gate lets them. A webhook
 * delivered at its first attempt costs one attempt row (written in batches) and nothing else.
 *
 * A queue moves to the database (queue/parking.ts) when its head's attempt fails (the head
 * with that attempt recorded, the rest behind it) or when its head waited longer than
 * `maxWaitMs` for its endpoint: a slow endpoint then holds database rows, not unacknowledged
 * stream messages that would stall its partition. Once moved, the queue's later events follow
 * it there until the retry worker has emptied it: the routing of each batch says whether the
 * database queue holds pending messages, and an event of a queue moved since that routing began
 * is checked again under the queue's lock before it may go from memory.
 *
 * Each webhook reports `handled()` once: delivered and logged, or committed to the database
 * queue. Its stream message is acknowledged when all its webhooks are handled.
 */
import type { Batcher } from "@dos/service-kit";
import type { Logger } from "pino";
import type { RoutedEndpoint } from "../intake/intake.repository.ts";
import type { DispatcherMetrics } from "../metrics.ts";
import type { ParkOutcome, ParkRequest } from "../queue/parking.ts";
import type { StoredEvent } from "../queue/queue.repository.ts";
import type { DeliveredAttempt } from "./attempts.repository.ts";
import type { QueuedSend, SendGate } from "./send-gate.ts";
import type { Send, SentAttempt } from "./sender.ts";

export interface LiveWebhook {
  event: StoredEvent;
  endpoint: RoutedEndpoint;
  partition: number;
  /** Called once the webhook is handled: delivered and logged, or in the database queue. */
  handled(): void;
}

export interface Routing {
  /** The routing found pending messages of this (endpoint, delivery) in the database. */
  queued: boolean;
  /** When the routing's read began (performance.now()). */
  routedAt: number;
}

export interface LiveQueues {
  add(webhook: LiveWebhook, routing: Routing): void;
  /**
   * Sends nothing more of the partition and forgets its webhooks not started (their stream
   * messages stay unacknowledged, for the next owner); resolves once the ones in flight are
   * handled.
   */
  release(partition: number): Promise<void>;
}

interface Chain {
  key: string;
  partition: number;
  endpointId: string;
  /** Not handled yet, head first; the head may be in the gate, being sent or being checked. */
  waiting: LiveWebhook[];
  mode: "fast" | "checking" | "parking";
  /** The head's place in the gate while it waits there. */
  inGate: QueuedSend | undefined;
  /** POSTs, checks and writes to the database queue in flight. */
  busy: number;
  dropped: boolean;
}

/** How long a queue's move to the database is remembered for the routings begun before it. */
const MOVED_MEMORY_MS = 60_000;

export function createLiveQueues(options: {
  gate: SendGate;
  send: Send;
  attemptLog: Batcher<DeliveredAttempt, void>;
  parking: Batcher<ParkRequest, ParkOutcome>;
  metrics: DispatcherMetrics;
  logger: Logger;
  maxWaitMs: number;
  /** Told when webhooks entered the database queue: some may be due now. */
  onQueued(): void;
}): LiveQueues {
  const { gate, metrics, logger } = options;
  const chains = new Map<string, Chain>();
  /** When each queue last moved a webhook into the database (performance.now()). */
  const movedAt = new Map<string, number>();
  /** Chains and log writes in flight, per partition, and who waits for them to end. */
  const work = new Map<number, { count: number; idle: Array<() => void> }>();

  setInterval(() => {
    const old = performance.now() - MOVED_MEMORY_MS;
    for (const [key, at] of movedAt) if (at < old) movedAt.delete(key);
  }, MOVED_MEMORY_MS).unref();

  const begin = (partition: number) => {
    const entry = work.get(partition) ?? { count: 0, idle: [] };
    entry.count++;
    work.set(partition, entry);
  };
  const end = (partition: number) => {
    const entry = work.get(partition);
    if (!entry) return;
    if (--entry.count > 0) return;
    work.delete(partition);
    for (const resolve of entry.idle) resolve();
  };

  function removeIfDone(chain: Chain) {
    if (chain.waiting.length > 0 || chain.busy > 0 || chain.inGate) return;
    if (chains.get(chain.key) === chain) chains.delete(chain.key);
    end(chain.partition);
  }

  function outgoing(webhook: LiveWebhook) {
    const { event, endpoint } = webhook;
    return {
      endpointId: endpoint.endpoint_id,
      url: endpoint.url,
      secretCiphertext: endpoint.secret_ciphertext,
      previousSecretCiphertext: endpoint.previous_secret_ciphertext,
      previousSecretExpiresAt: endpoint.previous_secret_expires_at,
      eventId: event.id,
      body: event.body,
      attempt: 1,
      traceparent: event.traceparent,
    };
  }

  /** Puts the chain's head in the gate; it waits there at most maxWaitMs. */
  function sendHead(chain: Chain) {
    const head = chain.waiting[0] as LiveWebhook;
    let started = false;
    const queued = gate.enqueue(
      { accountId: head.event.account_id, endpointId: chain.endpointId },
      () => {
        started = true;
        chain.inGate = undefined;
        return post(chain, head);
      },
      {
        expiresAfterMs: options.maxWaitMs,
        onExpired: () => {
          chain.inGate = undefined;
          moveToDatabase(chain);
        },
      },
    );
    // The gate may have started it already, when a slot was free.
    if (!started) chain.inGate = queued;
  }

  async function post(chain: Chain, head: LiveWebhook) {
    chain.busy++;
    const sent = await options.send(outgoing(head));
    chain.busy--;
    chain.waiting.shift();
    if (sent.decision.outcome === "delivered") {
      logDelivered(head, sent);
      if (chain.waiting.length > 0 && !chain.dropped) sendHead(chain);
    } else {
      chain.mode = "parking";
      queueInDatabase(chain, head, { kind: "failed", sent });
      for (const webhook of chain.waiting.splice(0)) queueInDatabase(chain, webhook, { kind: "park" });
    }
    removeIfDone(chain);
  }

  function logDelivered(webhook: LiveWebhook, sent: SentAttempt) {
    const { event } = webhook;
    metrics.observeAttempt("delivered", sent.result.durationMs);
    begin(webhook.partition);
    options.attemptLog
      .add({
        messageId: null,
        attempt: 1,
        endpointId: webhook.endpoint.endpoint_id,
        eventId: event.id,
        eventType: event.type,
        deliveryId: event.delivery_id,
        sequence: event.sequence,
        attemptedAt: sent.attemptedAt,
        durationMs: sent.result.durationMs,
        statusCode: sent.result.statusCode as number,
      })
      .then(webhook.handled, () => {})
      .finally(() => end(webhook.partition));
  }

  /** The head waited too long: the whole chain goes to the database queue. */
  function moveToDatabase(chain: Chain) {
    chain.mode = "parking";
    for (const webhook of chain.waiting.splice(0)) queueInDatabase(chain, webhook, { kind: "park" });
    removeIfDone(chain);
  }

  function queueInDatabase(
    chain: Chain,
    webhook: LiveWebhook,
    how: { kind: "park" } | { kind: "failed"; sent: SentAttempt },
  ) {
    chain.busy++;
    options.parking
      .add({ event: webhook.event, endpointId: chain.endpointId, partition: chain.partition, ...how })
      .then(
        (outcome) => {
          movedAt.set(chain.key, performance.now());
          if (outcome.recorded && how.kind === "failed") {
            metrics.observeFailure(outcome.recorded, how.sent.result.durationMs, chain.endpointId, logger);
          }
          webhook.handled();
          options.onQueued();
        },
        () => {},
      )
      .finally(() => {
        chain.busy--;
        removeIfDone(chain);
      });
  }

  /** The head may go from memory only if its database queue is empty by now (checked under its lock). */
  function check(chain: Chain) {
    const head = chain.waiting[0] as LiveWebhook;
    chain.busy++;
    options.parking
      .add({ event: head.event, endpointId: chain.endpointId, partition: chain.partition, kind: "check" })
      .then(
        (outcome) => {
          if (outcome.queued) {
            movedAt.set(chain.key, performance.now());
            chain.waiting.shift();
            head.handled();
            options.onQueued();
            moveToDatabase(chain);
          } else if (chain.dropped) {
            chain.waiting.splice(0);
          } else {
            chain.mode = "fast";
            sendHead(chain);
          }
        },
        () => {},
      )
      .finally(() => {
        chain.busy--;
        removeIfDone(chain);
      });
  }

  return {
    add(webhook, routing) {
      const key = `${webhook.endpoint.endpoint_id}/${webhook.event.delivery_id}`;
      const existing = chains.get(key);
      if (existing && !existing.dropped) {
        if (existing.mode === "parking") queueInDatabase(existing, webhook, { kind: "park" });
        else existing.waiting.push(webhook);
        return;
      }
      const moved = movedAt.get(key);
      const chain: Chain = {
        key,
        partition: webhook.partition,
        endpointId: webhook.endpoint.endpoint_id,
        waiting: [webhook],
        mode: routing.queued || (moved !== undefined && moved >= routing.routedAt) ? "checking" : "fast",
        inGate: undefined,
        busy: 0,
        dropped: false,
      };
      chains.set(key, chain);
      begin(chain.partition);
      if (chain.mode === "checking") check(chain);
      else sendHead(chain);
    },

    async release(partition) {
      for (const chain of chains.values()) {
        if (chain.partition !== partition) continue;
        chain.dropped = true;
        if (chain.inGate?.cancel()) chain.inGate = undefined;
        // A head being sent or checked stays until it is handled; the rest waits for the next owner.
        chain.waiting.splice(chain.busy > 0 ? 1 : 0);
        removeIfDone(chain);
      }
      const entry = work.get(partition);
      if (!entry) return;
      await new Promise<void>((resolve) => entry.idle.push(resolve));
    },
  };
}
