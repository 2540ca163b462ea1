/**
 * A KV bucket mirrored into memory, the one watcher every service uses: the bucket's content at
 * start is read first (`loaded` then turns true), then every update as it is written. The watch is
 * re-opened from the last revision seen whenever it stops (a NATS outage ends it), with the kit's
 * retry, so no update is missed and what was read stays in memory meanwhile. A watch that breaks
 * during the first load starts over from an empty mirror: its snapshot was incomplete.
 * The holder keeps its own state (a map, counters) and says how an entry changes it.
 */
import { type KV, Kvm, type KvWatchEntry } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";
import { retry, sleep } from "./retry.ts";

export interface KvMirrorOptions {
  nc: NatsConnection;
  bucket: string;
  logger: Logger;
  /** What is mirrored, in log lines. */
  label: string;
  /** Applies one entry, a PUT or a DEL/PURGE, to the holder's state. */
  apply(entry: KvWatchEntry): void;
  /** Empties the holder's state: the first load starts over. */
  clear(): void;
  /** Told once the content at start is applied (a log line with the holder's counts). */
  onLoaded?(): void;
  /** The pause before a failed watch is re-opened; 500 ms by default. */
  retryMs?: number;
}

export interface KvMirror {
  /** True once the bucket's content at start has been applied. */
  readonly loaded: boolean;
  /** True while a watch is open. */
  readonly watching: boolean;
  /** The bucket revision applied last: a write with a revision up to it is mirrored. */
  readonly revision: number;
  /** Starts watching (once); resolves when the content at start is loaded, or on stop. */
  start(): Promise<void>;
  /** Throws when the mirror is not loaded or its watch is down (readiness). */
  check(): Promise<void>;
  stop(): Promise<void>;
}

export function createKvMirror(options: KvMirrorOptions): KvMirror {
  const { logger, label } = options;
  const retryMs = options.retryMs ?? 500;
  const stopping = new AbortController();
  let loaded = false;
  let watching = false;
  let lastRevision = 0;
  let stopWatch: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  let markLoaded: () => void = () => {};
  const firstLoad = new Promise<void>((resolve) => {
    markLoaded = resolve;
  });

  const finishLoad = () => {
    loaded = true;
    options.onLoaded?.();
    markLoaded();
  };

  const watchOnce = async (kv: KV) => {
    if (!loaded) {
      options.clear();
      lastRevision = 0;
    }
    // The bucket's message count tells whether an initial snapshot is coming at all.
    const initial = loaded ? 0 : (await kv.status()).values;
    const watch = await kv.watch({ resumeFromRevision: lastRevision > 0 ? lastRevision + 1 : undefined });
    stopWatch = () => watch.stop();
    if (stopping.signal.aborted) watch.stop();
    watching = true;
    if (initial === 0 && !loaded) finishLoad();
    for await (const entry of watch) {
      lastRevision = entry.revision;
      options.apply(entry);
      if (!loaded && entry.delta === 0) finishLoad();
    }
  };

  const run = async () => {
    while (!stopping.signal.aborted) {
      await retry(
        async () => {
          try {
            await watchOnce(await new Kvm(options.nc).open(options.bucket));
          } finally {
            watching = false;
          }
        },
        {
          backoff: { firstMs: retryMs },
          signal: stopping.signal,
          // Once per streak: during a NATS outage it fails every pause.
          onRetry: (error, attempt) => {
            if (attempt === 1) logger.warn({ err: error }, `${label} watch failed; re-opening`);
          },
        },
      ).catch(() => {});
      // A watch that ended without an error (the connection closed) is re-opened after a pause too.
      await sleep(retryMs, stopping.signal);
    }
    markLoaded();
  };

  return {
    get loaded() {
      return loaded;
    },
    get watching() {
      return watching;
    },
    get revision() {
      return lastRevision;
    },
    async start() {
      loop ??= run();
      await firstLoad;
    },
    async check() {
      if (!loaded) throw new Error(`${label} is still loading`);
      if (!watching) throw new Error(`${label} watch is down`);
    },
    async stop() {
      stopping.abort();
      stopWatch?.();
      await loop;
    },
  };
}
