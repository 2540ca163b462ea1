/**
 * The open `/track/{token}/events` streams of this replica, and the one loop that feeds them.
 *
 * Every API_TRACKING_PUSH_MS the loop reads the state of every token that has an open stream, in
 * one batch (two queries per chunk of tokens, see TrackingService.states), and writes it to each
 * of the token's streams when it changed. However many pages are open on a delivery, its state is
 * read once per interval; the loop runs only while some stream is open.
 *
 * Each stream takes a slot of its token's and of its client address's budget; a stream over
 * either is refused (429) before anything is read. A stream is ended after its maximum lifetime
 * (EventSource reconnects by itself) and gets a comment line when it has been silent for the
 * heartbeat interval, so a dead connection is noticed and its slots freed.
 */
import type { ServerResponse } from "node:http";
import { HttpError } from "@dos/service-kit";
import type { Logger } from "pino";
import type { TrackingOutcome } from "./tracking.service.ts";

export interface TrackingStreamsOptions {
  /** The states of these tokens (TrackingService.states). */
  read: (tokens: string[]) => Promise<Map<string, TrackingOutcome>>;
  pushMs: number;
  heartbeatMs: number;
  maxLifetimeMs: number;
  perToken: number;
  perAddress: number;
  logger: Logger;
}

interface Stream {
  raw: ServerResponse;
  address: string;
  openedAt: number;
  lastWriteAt: number;
}

interface Watch {
  streams: Set<Stream>;
  /** The state last sent, as sent. */
  last: string;
}

/** Tokens per batch read: a bounded statement however many deliveries are followed. */
const READ_CHUNK = 500;
/** A client that lets this much of its stream pile up unread is gone or hostile: it is ended. */
const MAX_UNREAD_BYTES = 64 * 1024;

export function createTrackingStreams(options: TrackingStreamsOptions) {
  const watches = new Map<string, Watch>();
  // Slots are counted from admission, before the first read, so concurrent opens cannot overrun.
  const slotsOfToken = new Map<string, number>();
  const slotsOfAddress = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let reading = false;

  const count = (counts: Map<string, number>, key: string, delta: number) => {
    const n = (counts.get(key) ?? 0) + delta;
    if (n > 0) counts.set(key, n);
    else counts.delete(key);
  };

  function release(token: string, address: string) {
    count(slotsOfToken, token, -1);
    count(slotsOfAddress, address, -1);
  }

  function write(stream: Stream, text: string) {
    stream.raw.write(text);
    stream.lastWriteAt = Date.now();
  }

  function end(token: string, stream: Stream) {
    const watch = watches.get(token);
    if (!watch?.streams.delete(stream)) return;
    release(token, stream.address);
    if (watch.streams.size === 0) watches.delete(token);
    if (watches.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
    stream.raw.end();
  }

  function deliver(token: string, watch: Watch, outcome: TrackingOutcome) {
    if (outcome instanceof HttpError) {
      // Expired (or gone): the page says so and stops; EventSource would reconnect to a 410.
      for (const stream of watch.streams) {
        write(stream, "event: gone\ndata: {}\n\n");
        end(token, stream);
      }
      return;
    }
    const text = JSON.stringify(outcome);
    if (text === watch.last) return;
    watch.last = text;
    for (const stream of watch.streams) write(stream, `event: state\ndata: ${text}\n\n`);
  }

  /** Lifetime, heartbeat and unread backlog of every stream: what reaps dead clients. */
  function upkeep(now: number) {
    for (const [token, watch] of watches) {
      for (const stream of watch.streams) {
        const over = now - stream.openedAt >= options.maxLifetimeMs || stream.raw.writableLength > MAX_UNREAD_BYTES;
        if (over || stream.raw.destroyed) {
          end(token, stream);
        } else if (now - stream.lastWriteAt >= options.heartbeatMs) {
          write(stream, ": keep-alive\n\n");
        }
      }
    }
  }

  async function readAll() {
    reading = true;
    try {
      const tokens = [...watches.keys()];
      for (let i = 0; i < tokens.length; i += READ_CHUNK) {
        const outcomes = await options.read(tokens.slice(i, i + READ_CHUNK));
        for (const [token, outcome] of outcomes) {
          const watch = watches.get(token);
          if (watch) deliver(token, watch, outcome);
        }
      }
    } catch (error) {
      options.logger.warn({ err: error }, "tracking streams could not read the states; retrying");
    } finally {
      reading = false;
    }
  }

  function tick() {
    upkeep(Date.now());
    // A read slower than the interval is not stacked on: the next tick waits for it.
    if (!reading && watches.size > 0) void readAll();
  }

  /** Takes a slot of the token's and of the address's budget, or refuses with a 429. */
  function admit(token: string, address: string) {
    const full =
      (slotsOfToken.get(token) ?? 0) >= options.perToken
        ? `tracking link has ${options.perToken} open streams already`
        : (slotsOfAddress.get(address) ?? 0) >= options.perAddress
          ? `client address has ${options.perAddress} open tracking streams already`
          : null;
    if (full) {
      // A slot frees when a page closes; a dead client's, about a heartbeat after it died.
      const retryAfter = Math.max(1, Math.ceil(options.heartbeatMs / 1000));
      throw new HttpError(429, full, { "retry-after": String(retryAfter) });
    }
    count(slotsOfToken, token, 1);
    count(slotsOfAddress, address, 1);
  }

  /** The state a new stream starts with: the one its token's streams were last sent, else read. */
  async function firstState(token: string): Promise<string> {
    const last = watches.get(token)?.last;
    if (last !== undefined) return last;
    const outcome = (await options.read([token])).get(token);
    if (outcome === undefined || outcome instanceof HttpError)
      throw outcome ?? new HttpError(404, "tracking link not found");
    return JSON.stringify(outcome);
  }

  return {
    /**
     * Opens a stream on a token for a client address: refused (429) over a budget, 404 or 410 as
     * the link is, else `start` turns the request into the event stream and it is fed until it
     * closes or its lifetime ends.
     */
    async open(token: string, address: string, start: () => ServerResponse) {
      admit(token, address);
      let first: string;
      try {
        first = await firstState(token);
      } catch (error) {
        release(token, address);
        throw error;
      }
      const raw = start();
      const now = Date.now();
      const stream: Stream = { raw, address, openedAt: now, lastWriteAt: now };
      let watch = watches.get(token);
      if (!watch) {
        watch = { streams: new Set(), last: first };
        watches.set(token, watch);
      }
      watch.streams.add(stream);
      write(stream, `event: state\ndata: ${watch.last}\n\n`);
      raw.on("close", () => end(token, stream));
      timer ??= setInterval(tick, options.pushMs);
      // Closed while its first state was read: that 'close' came before the listener above.
      if (raw.destroyed) end(token, stream);
    },

    /** How many streams are open, and on how many tokens (metrics and tests). */
    size() {
      let streams = 0;
      for (const watch of watches.values()) streams += watch.streams.size;
      return { streams, tokens: watches.size };
    },

    /** Ends every stream (shutdown). */
    close() {
      for (const [token, watch] of watches) for (const stream of watch.streams) end(token, stream);
    },
  };
}
export type TrackingStreams = ReturnType<typeof createTrackingStreams>;
