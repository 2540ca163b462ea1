/**
 * A background loop woken by PostgreSQL NOTIFY on one channel, with polling as a fallback (a
 * lost LISTEN connection, a NOTIFY sent while it was busy). The outbox relays (delivery events,
 * fleet entries) run their passes in it; the catalogue cache only listens (onListen, onLost,
 * onNotification), its pass does nothing.
 */
import type { Database } from "@dos/service-kit";
import type { Logger } from "pino";

type Pool = Database<unknown>["pool"];
/** The part of a pooled connection the LISTEN side uses. */
interface ListenClient {
  query(text: string): Promise<unknown>;
  release(destroy?: Error | boolean): void;
  on(event: "notification", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
}

export interface ListenLoopOptions {
  pool: Pool;
  channel: string;
  pollMs: number;
  logger: Logger;
  /** One pass of work; a failure is logged and the pass retried at the next wake-up. */
  pass(): Promise<unknown>;
  /** Told each time LISTEN is in place (at start, and again after a lost connection). */
  onListen?(): void;
  /** Told when the LISTEN connection is lost or given back: notifications may be missed until onListen. */
  onLost?(): void;
  /** Told of each notification as it arrives, before the pass it wakes. */
  onNotification?(): void;
}

export interface ListenLoop {
  start(): void;
  stop(): Promise<void>;
}

export function createListenLoop(options: ListenLoopOptions): ListenLoop {
  const { logger, channel } = options;
  let running = false;
  let loop: Promise<void> | undefined;
  let listener: ListenClient | undefined;
  let releaseListener: ((error?: Error) => void) | undefined;
  let signalled = false;
  let wake: (() => void) | undefined;

  const signal = () => {
    options.onNotification?.();
    signalled = true;
    wake?.();
  };

  async function listen() {
    if (listener) return;
    let client: ListenClient | undefined;
    // The connection fails on its own ('error', even after it was given back) or in our hands,
    // or the loop stops: whichever comes first ends it, once. It is destroyed rather than
    // pooled, since a session that LISTENed is no fit for other work.
    let released = false;
    const giveBack = (error?: Error) => {
      if (released || !client) return;
      released = true;
      if (listener === client) {
        listener = undefined;
        options.onLost?.();
      }
      client.release(error ?? true);
    };
    try {
      client = await options.pool.connect();
      client.on("notification", signal);
      client.on("error", (error: Error) => {
        if (released) return;
        logger.warn({ err: error, channel }, "LISTEN connection lost; polling until it is back");
        giveBack(error);
      });
      await client.query(`LISTEN ${channel}`);
      listener = client;
      releaseListener = giveBack;
      options.onListen?.();
    } catch (error) {
      logger.warn({ err: error, channel }, "cannot LISTEN; polling");
      giveBack(error as Error);
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
        await options.pass();
      } catch (error) {
        logger.warn({ err: error, channel }, "background pass failed; retrying");
      }
      await sleep(options.pollMs);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      loop = undefined;
      releaseListener?.();
      releaseListener = undefined;
    },
  };
}
