/**
 * Group commit: items added by concurrent callers are gathered into one batch, handled in one
 * round trip, and each caller's promise settles with its own item's outcome. While batches are in
 * flight new items keep gathering, so batches grow with the load rather than with the latency,
 * and a lone item goes at the next turn of the event loop (or after `lingerMs`).
 *
 * What a failed batch does is its failure policy, one of three:
 * - `reject`: every item of the batch is rejected with the error.
 * - `isolate`: a batch of several is halved and each half handled again, down to the items that
 *   fail alone; only those are rejected. `when` limits the halving to errors an item can cause
 *   (a row the database refuses); any other error rejects the batch as it is.
 * - `retry`: the batch is handled again after a backoff pause, until it succeeds or the batcher
 *   stops; then the batch and every item still waiting are rejected with the last error.
 *
 * The hot path (geo-ingest's positions) goes through `add`: one pending record and one promise
 * per item, nothing else per item.
 */
import { type Backoff, retry } from "./retry.ts";

export type FailurePolicy =
  | { policy: "reject" }
  | { policy: "isolate"; when?: (error: unknown) => boolean }
  | { policy: "retry"; backoff: Backoff; onRetry?: (error: unknown, items: number, pauseMs: number) => void };

/** A result that rejects its own item alone; the rest of the batch is answered as usual. */
export class ItemRefused {
  readonly reason: unknown;
  constructor(reason: unknown) {
    this.reason = reason;
  }
}

export interface BatcherOptions<I, O> {
  /** Handles a batch: one result per item, in order (an `ItemRefused` rejects that item). */
  handle(items: I[]): Promise<ArrayLike<O | ItemRefused>>;
  /** Most items per batch. */
  maxBatch: number;
  /** Batches in flight at once (each holds a pooled connection while it runs); 1 by default. */
  concurrency?: number;
  /**
   * How long a batch that could take more items waits for them: each batch costs a round trip
   * whatever its size, so a short wait pays where a delay is harmless. 0 (the default) gathers
   * what arrives in the same turn of the event loop.
   */
  lingerMs?: number;
  /**
   * With `lingerMs`: once no batch was taken for this long, an item goes at the next turn
   * instead of lingering. The lone items of a trickle then cost no timer (a wake-up each, for a
   * batch that would stay alone anyway), while a burst, whose batches follow each other closely,
   * still gathers. Unset: items always linger.
   */
  quietMs?: number;
  onFailure: FailurePolicy;
  /** Told of every item rejected by an error of its batch (log lines, metrics); not of `ItemRefused`. */
  onRejected?(error: unknown, items: number): void;
  /**
   * Whose the item is: when more items wait than a batch takes, the owners take turns for its
   * room, each one's items in the order added, so one owner's pile does not hold another's back.
   */
  ownerOf?: (item: I) => number;
  /** The order a batch is handled in (with concurrency, a key order keeps batches from deadlocking). */
  order?: (a: I, b: I) => number;
}

export interface Batcher<I, O> {
  /** Settles with the item's own outcome once its batch has been handled. */
  add(item: I): Promise<O>;
  /** Items added and not yet settled. */
  readonly queued: number;
  /** Sends what waits at once, then resolves when nothing waits or is in flight. */
  drain(): Promise<void>;
  /** Ends the retries of the `retry` policy: a failing batch and what waits are rejected. */
  stop(): void;
}

interface Pending<I, O> {
  item: I;
  resolve(result: O): void;
  reject(error: unknown): void;
}

export function createBatcher<I, O>(options: BatcherOptions<I, O>): Batcher<I, O> {
  const { maxBatch, onFailure, ownerOf, order } = options;
  const concurrency = options.concurrency ?? 1;
  const lingerMs = options.lingerMs ?? 0;
  const quietMs = options.quietMs;
  let lastTakenAt = Number.NEGATIVE_INFINITY;
  const stopping = new AbortController();
  let pending: Array<Pending<I, O>> = [];
  let inFlight = 0;
  let inFlightItems = 0;
  // Set when the linger has run out: batches go until nothing waits.
  let due = false;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let timerIsImmediate = false;
  let idle: Array<() => void> = [];

  const take = (): Array<Pending<I, O>> => {
    if (pending.length <= maxBatch) {
      const batch = pending;
      pending = [];
      return batch;
    }
    if (!ownerOf) {
      const batch = pending.slice(0, maxBatch);
      pending = pending.slice(maxBatch);
      return batch;
    }
    const byOwner = [...Map.groupBy(pending, (call) => ownerOf(call.item)).values()];
    const taken = new Set<Pending<I, O>>();
    for (let turn = 0; taken.size < maxBatch; turn++) {
      for (const calls of byOwner) {
        const call = calls[turn];
        if (call && taken.size < maxBatch) taken.add(call);
      }
    }
    const batch = pending.filter((call) => taken.has(call));
    pending = pending.filter((call) => !taken.has(call));
    return batch;
  };

  const reject = (batch: Array<Pending<I, O>>, error: unknown) => {
    options.onRejected?.(error, batch.length);
    for (const call of batch) call.reject(error);
  };

  const settle = (batch: Array<Pending<I, O>>, results: ArrayLike<O | ItemRefused>) => {
    for (let i = 0; i < batch.length; i++) {
      const call = batch[i] as Pending<I, O>;
      const result = results[i];
      if (result instanceof ItemRefused) call.reject(result.reason);
      else call.resolve(result as O);
    }
  };

  const run = async (batch: Array<Pending<I, O>>): Promise<void> => {
    if (order) batch.sort((a, b) => order(a.item, b.item));
    const items = batch.map((call) => call.item);
    let results: ArrayLike<O | ItemRefused>;
    try {
      results =
        onFailure.policy === "retry"
          ? await retry(() => options.handle(items), {
              backoff: onFailure.backoff,
              signal: stopping.signal,
              onRetry: (error, _attempt, pauseMs) => onFailure.onRetry?.(error, items.length, pauseMs),
            })
          : await options.handle(items);
    } catch (error) {
      if (onFailure.policy === "isolate" && batch.length > 1 && (onFailure.when?.(error) ?? true)) {
        const half = Math.ceil(batch.length / 2);
        await run(batch.slice(0, half));
        await run(batch.slice(half));
        return;
      }
      // A retry ends only when the batcher stops: what waits would only fail the same way.
      reject(onFailure.policy === "retry" ? [...batch, ...pending.splice(0)] : batch, error);
      return;
    }
    settle(batch, results);
  };

  const pump = () => {
    while (inFlight < concurrency && pending.length > 0 && (due || pending.length >= maxBatch)) {
      const batch = take();
      if (quietMs !== undefined) lastTakenAt = performance.now();
      inFlight++;
      inFlightItems += batch.length;
      void run(batch).finally(() => {
        inFlight--;
        inFlightItems -= batch.length;
        pump();
      });
    }
    if (pending.length === 0) {
      due = false;
      // A full batch went before its linger ran out: nothing waits for that timer any more.
      if (timer) disarm();
    } else if (!due && !timer) arm();
    if (pending.length === 0 && inFlight === 0 && idle.length > 0) {
      const waiters = idle;
      idle = [];
      for (const wake of waiters) wake();
    }
  };

  const fire = () => {
    timer = undefined;
    due = true;
    pump();
  };
  const arm = () => {
    timerIsImmediate =
      lingerMs === 0 || (quietMs !== undefined && performance.now() - lastTakenAt >= quietMs && inFlight === 0);
    timer = timerIsImmediate ? setImmediate(fire) : setTimeout(fire, lingerMs);
  };
  const disarm = () => {
    if (timerIsImmediate) clearImmediate(timer as NodeJS.Immediate);
    else clearTimeout(timer as NodeJS.Timeout);
    timer = undefined;
  };

  return {
    add(item) {
      return new Promise<O>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        if (pending.length >= maxBatch) pump();
        else if (!timer && !due) arm();
      });
    },
    get queued() {
      return pending.length + inFlightItems;
    },
    drain() {
      disarm();
      due = true;
      return new Promise<void>((resolve) => {
        idle.push(resolve);
        pump();
      });
    },
    stop() {
      stopping.abort();
    },
  };
}

export interface GatheringOptions {
  /** How long a caller waits for company; 0 turns gathering off. */
  withinMs: number;
  /** Callers that go together at once, without waiting longer. */
  enough: number;
}

export interface Gathering {
  /** Resolves when the callers gathered with this one go on, all in the same turn of the event loop. */
  join(): Promise<void>;
}

/**
 * Callers about to make the same kind of round trip wait for each other and go on together, so
 * that their messages leave in one write and their answers come back in one read, and what they
 * do next (a group commit) finds them together. Each round trip costs every process it crosses a
 * wake-up whatever it carries: at a steady rate, callers gathered by fours cost about a quarter
 * of the wake-ups. Callers wait only while company is likely: one arriving more than `withinMs`
 * after the last group went on goes at once, so a trickle waits for nothing; a group goes as soon
 * as `enough` callers are in it, so a burst waits little.
 */
export function createGathering(options: GatheringOptions): Gathering {
  if (options.withinMs <= 0) return { join: () => Promise.resolve() };
  const gathered = createBatcher<undefined, undefined>({
    handle: async (callers) => new Array(callers.length),
    maxBatch: Math.max(1, options.enough),
    lingerMs: options.withinMs,
    quietMs: options.withinMs,
    onFailure: { policy: "reject" },
  });
  return { join: () => gathered.add(undefined) };
}
