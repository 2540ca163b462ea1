/**
 * A durable JetStream pull consumer run the nats.js way: the consumer is created (or brought back
 * to our configuration), consume() runs inside an outer loop that re-creates it after a failure
 * or missed heartbeats, and stop() ends the iteration and waits for the message in hand.
 * Acknowledging is the caller's: only after its effect is recorded.
 */
import { type ConsumerConfig, type ConsumerMessages, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";
import { retry } from "./retry.ts";

export interface DurableConsumerOptions {
  nc: NatsConnection;
  stream: string;
  /** The consumer's configuration; `durable_name` names it. */
  config: Partial<ConsumerConfig> & { durable_name: string };
  logger: Logger;
  /** Says what is consumed, in log lines. */
  label: string;
  /** Handles the messages until they end; a throw re-creates the consumer. */
  drain(messages: ConsumerMessages): Promise<void>;
  maxMessages?: number;
  retryMs?: number;
  /**
   * Brings the consumer to where consuming starts, before each consume; `restart` is false for
   * the first one after start(). By default ensure(): created, or updated to `config`.
   */
  prepare?(restart: boolean): Promise<void>;
}

export interface DurableConsumer {
  /** Creates the consumer, or updates it when a field we set differs from the server's. */
  ensure(): Promise<void>;
  /** Starts the consume loop in the background. */
  start(): void;
  stop(): Promise<void>;
}

export function createDurableConsumer(options: DurableConsumerOptions): DurableConsumer {
  const { nc, stream, config, logger } = options;
  const retryMs = options.retryMs ?? 1000;
  let stopping: AbortController | undefined;
  let current: ConsumerMessages | undefined;
  let loop: Promise<void> | undefined;

  async function ensure() {
    const jsm = await jetstreamManager(nc);
    const existing = await jsm.consumers.info(stream, config.durable_name).catch(() => null);
    if (!existing) {
      await jsm.consumers.add(stream, config);
      return;
    }
    const current = existing.config as unknown as Record<string, unknown>;
    const differs = Object.entries(config).some(([field, value]) => current[field] !== value);
    if (differs) await jsm.consumers.update(stream, config.durable_name, config);
  }

  async function consumeOnce(signal: AbortSignal, restart: boolean) {
    try {
      await (options.prepare ? options.prepare(restart) : ensure());
      const consumer = await jetstream(nc).consumers.get(stream, config.durable_name);
      current = await consumer.consume({ max_messages: options.maxMessages ?? 256 });
      // A consume stopped before it is iterated must be stopped here, or the loop would wait on it.
      if (signal.aborted) {
        current.stop();
        return;
      }
      await options.drain(current);
    } catch (error) {
      current?.stop();
      throw error;
    }
  }

  async function run(signal: AbortSignal) {
    for (let restart = false; !signal.aborted; restart = true) {
      await retry((attempt) => consumeOnce(signal, restart || attempt > 1), {
        backoff: { firstMs: retryMs },
        signal,
        onRetry: (error) => logger.warn({ err: error }, `${options.label} consumer failed; re-creating it`),
      }).catch(() => {});
    }
  }

  return {
    ensure,
    start() {
      if (stopping && !stopping.signal.aborted) return;
      stopping = new AbortController();
      loop = run(stopping.signal);
    },
    async stop() {
      stopping?.abort();
      current?.stop();
      await loop;
    },
  };
}
