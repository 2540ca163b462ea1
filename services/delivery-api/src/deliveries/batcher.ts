/**
 * Gathers the calls of concurrent requests into one database round trip. A lone call runs at
 * the next turn of the event loop (no timer, no added latency); under load, calls gather while
 * earlier batches are in flight, so batches grow with the load rather than with the latency.
 * On loopback every round trip costs a system call and a wake-up of PostgreSQL, which is most
 * of a create's CPU: sharing them is what lets creates keep up with the HTTP layer.
 */

export interface BatcherOptions {
  /** Most items per round trip. */
  maxBatch: number;
  /** Round trips in flight at once (each holds a pooled connection while it runs). */
  concurrency: number;
}

export interface Batcher<I, O> {
  /** Resolves with the item's own result once its batch has run. */
  run(item: I): Promise<O>;
}

interface Pending<I, O> {
  item: I;
  resolve(result: O): void;
  reject(error: unknown): void;
}

/**
 * `runBatch` answers one result per item, in order. When a batch of several fails, each of its
 * items is run alone, so one bad item fails only its own call.
 */
export function createBatcher<I, O>(runBatch: (items: I[]) => Promise<O[]>, options: BatcherOptions): Batcher<I, O> {
  let pending: Array<Pending<I, O>> = [];
  let inFlight = 0;
  let scheduled = false;

  async function flush(batch: Array<Pending<I, O>>): Promise<void> {
    let results: O[];
    try {
      results = await runBatch(batch.map((call) => call.item));
    } catch (error) {
      const [only] = batch;
      if (batch.length === 1 && only) return only.reject(error);
      await Promise.all(batch.map((call) => flush([call])));
      return;
    }
    for (const [index, call] of batch.entries()) call.resolve(results[index] as O);
  }

  function pump() {
    scheduled = false;
    while (inFlight < options.concurrency && pending.length > 0) {
      const batch = pending.slice(0, options.maxBatch);
      pending = pending.slice(batch.length);
      inFlight++;
      void flush(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return {
    run(item) {
      return new Promise<O>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        // A busy batcher picks the call up when a round trip ends; an idle one at the next turn.
        if (!scheduled && inFlight < options.concurrency) {
          scheduled = true;
          setImmediate(pump);
        }
      });
    },
  };
}
