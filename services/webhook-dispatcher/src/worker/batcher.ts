/**
 * Group commit: items added while a batch is handled go together in the next one, so the cost
 * per item (a round trip, a statement) falls as the load rises, and one item alone goes at once.
 * Batches run one at a time, in the order their items were added. A failed batch (the database
 * away) is tried again, growing the pause, until it succeeds or the batcher stops; each item's
 * promise settles with its batch. Used for every write of the stream path and the retries, and
 * for intake's routing.
 */
import type { Logger } from "pino";

export interface Batcher<T, R> {
  add(item: T): Promise<R>;
  /** Resolves once every item added so far is handled (or the batcher stopped). */
  idle(): Promise<void>;
  /** Stops retrying: items not handled yet are rejected. */
  stop(): void;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

export function createBatcher<T, R>(options: {
  /** Handles a batch; answers one result per item, in order. */
  handle(items: T[]): Promise<R[]>;
  maxBatch: number;
  /**
   * How long a batch that could take more items waits for them first. Each batch costs a round
   * trip and a statement whatever its size, so a short wait pays where a delay is harmless.
   */
  lingerMs?: number;
  logger: Logger;
  /** What is handled, in log lines. */
  label: string;
  /**
   * Whose the item is (its account): when more items wait than a batch takes, the owners take
   * turns for its room, each one's items in the order added, so one owner's pile of items does
   * not hold another's back for batches.
   */
  ownerOf?: (item: T) => number;
}): Batcher<T, R> {
  type Entry = { item: T; resolve(result: R): void; reject(error: unknown): void };
  let queue: Entry[] = [];
  let writing: Promise<void> | undefined;
  let stopped = false;

  /** The next batch: the first items added, or with owners, each owner's first items in turn. */
  function takeBatch(): Entry[] {
    const { ownerOf, maxBatch } = options;
    if (!ownerOf || queue.length <= maxBatch) return queue.splice(0, maxBatch);
    const byOwner = [...Map.groupBy(queue, (entry) => ownerOf(entry.item)).values()];
    const taken = new Set<Entry>();
    for (let turn = 0; taken.size < maxBatch; turn++) {
      for (const items of byOwner) {
        const entry = items[turn];
        if (entry && taken.size < maxBatch) taken.add(entry);
      }
    }
    const batch = queue.filter((entry) => taken.has(entry));
    queue = queue.filter((entry) => !taken.has(entry));
    return batch;
  }

  async function drain() {
    while (queue.length > 0) {
      if (options.lingerMs && queue.length < options.maxBatch) {
        await new Promise((resolve) => setTimeout(resolve, options.lingerMs));
      }
      const batch = takeBatch();
      for (let pause = FIRST_RETRY_MS; ; pause = Math.min(pause * 2, MAX_RETRY_MS)) {
        try {
          const results = await options.handle(batch.map((entry) => entry.item));
          batch.forEach((entry, i) => {
            entry.resolve(results[i] as R);
          });
          break;
        } catch (error) {
          if (stopped) {
            for (const entry of [...batch, ...queue.splice(0)]) entry.reject(error);
            return;
          }
          options.logger.warn({ err: error, items: batch.length }, `cannot handle ${options.label}; retrying`);
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
    }
  }

  function kick() {
    if (writing) return;
    writing = drain().finally(() => {
      writing = undefined;
      // Added after the last batch was taken but before this ran.
      if (queue.length > 0) kick();
    });
  }

  return {
    add(item) {
      const result = new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
      });
      kick();
      return result;
    },
    async idle() {
      while (writing) await writing;
    },
    stop() {
      stopped = true;
    },
  };
}
