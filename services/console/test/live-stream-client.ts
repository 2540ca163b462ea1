/**
 * The live map's event stream read over plain HTTP as a browser's EventSource would, with the
 * browser's cookies: each event parsed with its arrival time, bytes counted; or not read at all
 * (paused), as a browser tab that stopped reading.
 */
import http from "node:http";
import { waitFor } from "@dos/service-kit/testing";
import type { Browser } from "./http-browser.ts";

export interface LiveEvent {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: event bodies are read field by field by the tests
  data: any;
  at: number;
}

export interface LiveStreamClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The answer's body when it was not a stream (an error). */
  body: unknown;
  events: LiveEvent[];
  comments: number;
  bytes: number;
  ended: boolean;
  /** The first event, from this index on, that passes `test`; waits up to `timeoutMs`. */
  next(test: (event: LiveEvent) => boolean, timeoutMs?: number, from?: number): Promise<LiveEvent>;
  /** Reading stops (the socket is not drained) or starts again. */
  pause(): void;
  resume(): void;
  close(): void;
}

export function openLiveStream(browser: Browser, path = "/api/staff/live"): Promise<LiveStreamClient> {
  const url = new URL(path, browser.base);
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: url.hostname, port: url.port, path: url.pathname, headers: { cookie, accept: "text/event-stream" } },
      (response) => {
        const client: LiveStreamClient = {
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: undefined,
          events: [],
          comments: 0,
          bytes: 0,
          ended: false,
          async next(test, timeoutMs = 10_000, from = 0) {
            return waitFor(async () => client.events.slice(from).find(test), timeoutMs);
          },
          pause: () => response.pause(),
          resume: () => response.resume(),
          close: () => request.destroy(),
        };
        if (client.status !== 200) {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            text += chunk;
          });
          response.on("end", () => {
            client.body = text ? JSON.parse(text) : undefined;
            resolve(client);
          });
          return;
        }
        let buffer = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          client.bytes += Buffer.byteLength(chunk);
          buffer += chunk;
          for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            if (block.startsWith(":")) {
              client.comments++;
              continue;
            }
            const name = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
            const data = /^data: (.*)$/m.exec(block)?.[1];
            client.events.push({ name, data: data === undefined ? undefined : JSON.parse(data), at: Date.now() });
          }
        });
        response.on("close", () => {
          client.ended = true;
        });
        resolve(client);
      },
    );
    request.on("error", reject);
  });
}
