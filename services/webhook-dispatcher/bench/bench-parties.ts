/**
 * The parties the dispatcher benchmarks share: the receiver process (a client's system) with the
 * arrivals it reports, the publisher process (delivery-api's relay), the plain POST loop every
 * ratio is measured against, and the median those ratios are reported by.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Agent } from "undici";
import type { PublisherReply, PublisherRequest } from "./publisher.ts";

export interface Receiver {
  process: ChildProcess;
  /** Where it takes webhooks: `http://127.0.0.1:<port>/hooks`. */
  url: string;
  /** When each webhook-id first arrived (epoch ms), as reported so far. */
  arrivals: Map<string, number>;
  /** Resolves once `count` webhook-ids have arrived; rejects after `timeoutMs`. */
  waitForArrivals(count: number, timeoutMs: number): Promise<void>;
}

/** Forks bench/receiver.ts and follows the arrivals it reports in batches. */
export async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  let onArrival: (() => void) | undefined;
  const child = fork(fileURLToPath(new URL("./receiver.ts", import.meta.url)), { stdio: "inherit" });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.on("message", (message: { port?: number; arrivals?: Array<[string, number]> }) => {
      if (message.port) resolve(message.port);
      for (const [id, at] of message.arrivals ?? []) if (!arrivals.has(id)) arrivals.set(id, at);
      if (message.arrivals) onArrival?.();
    });
  });
  return {
    process: child,
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    waitForArrivals: (count, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${arrivals.size} of ${count} webhooks arrived`)),
          timeoutMs,
        );
        onArrival = () => {
          if (arrivals.size < count) return;
          clearTimeout(timer);
          onArrival = undefined;
          resolve();
        };
        onArrival();
      }),
  };
}

export interface Publisher {
  process: ChildProcess;
  /** Has it publish the events; resolves once JetStream acknowledged them all. */
  publish(request: PublisherRequest): Promise<Extract<PublisherReply, { seconds: number }>>;
}

/** Forks bench/publisher.ts on a namespace's DELIVERY_EVENTS and waits until it is connected. */
export async function startPublisher(natsUrl: string, namespace: string): Promise<Publisher> {
  const child = fork(fileURLToPath(new URL("./publisher.ts", import.meta.url)), [natsUrl, namespace], {
    stdio: "inherit",
  });
  await new Promise((resolve) => child.once("message", resolve));
  return {
    process: child,
    publish: (request) =>
      new Promise((resolve) => {
        child.once("message", resolve);
        child.send(request);
      }),
  };
}

/**
 * The baseline: the bodies POSTed by a keep-alive client, `concurrency` at a time, body and
 * content type only. Returns requests per second.
 */
export async function plainLoop(agent: Agent, url: string, bodies: string[], concurrency: number): Promise<number> {
  const { origin, pathname } = new URL(url);
  const started = performance.now();
  let cursor = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (cursor < bodies.length) {
        const body = bodies[cursor++] as string;
        const response = await agent.request({
          origin,
          path: pathname,
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await response.body.dump();
      }
    }),
  );
  return bodies.length / ((performance.now() - started) / 1000);
}

/** The middle value (the upper one of an even count): the benches' ratio over their rounds. */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
}
