/**
 * Retry with backoff, the one loop every service uses to wait out a dependency (the database,
 * NATS) that is away: the work runs again after a pause that doubles from `firstMs` up to
 * `maxMs`, until it succeeds or the signal aborts. An abort ends the pause under way at once, so
 * a shutdown never waits out a backoff.
 */

export interface Backoff {
  /** The pause after the first failure. */
  firstMs: number;
  /** The longest pause: pauses double up to it. Without it every pause is `firstMs`. */
  maxMs?: number;
}

export interface RetryOptions {
  backoff: Backoff;
  /** Ends the retries: the last error is thrown instead of another attempt. */
  signal?: AbortSignal;
  /** Told of every failed attempt that will be retried, before its pause (log lines, metrics). */
  onRetry?(error: unknown, attempt: number, pauseMs: number): void;
}

/** Runs `work` until it succeeds; throws its last error only once `signal` has aborted. */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { backoff, signal } = options;
  let pauseMs = backoff.firstMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      if (signal?.aborted) throw error;
      options.onRetry?.(error, attempt, pauseMs);
      await sleep(pauseMs, signal);
      if (signal?.aborted) throw error;
      pauseMs = Math.min(pauseMs * 2, backoff.maxMs ?? backoff.firstMs);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
