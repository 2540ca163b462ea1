/** A real HTTP receiver on loopback that records every webhook and answers as the test says. */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  /** Per-delivery fields of the envelope, for order checks. */
  deliveryId: number;
  sequence: number;
  receivedAt: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow or hanging receiver). */
  delayMs?: number;
}

export type Responder = (request: Received, received: Received[]) => Answer;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests that arrived and are neither answered nor given up by the sender yet. */
  readonly inFlight: number;
  /** The most requests that were ever unanswered at once. */
  readonly maxInFlight: number;
  respond(responder: Responder): void;
  close(): Promise<void>;
}

export async function startReceiver(
  responder: Responder = () => ({ status: 204 }),
  host = "127.0.0.1",
): Promise<Receiver> {
  const received: Received[] = [];
  let respond = responder;
  let inFlight = 0;
  let maxInFlight = 0;
  // Answers held back (a hanging receiver's): cleared on close, or they would keep the process alive.
  const heldBack = new Set<NodeJS.Timeout>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // Answered, or given up by the sender (its timeout): no longer in flight.
    let open = true;
    const done = () => {
      if (open) inFlight--;
      open = false;
    };
    response.on("close", done);
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const envelope = JSON.parse(body) as { delivery_id: number; sequence: number };
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const entry: Received = {
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        signature: headers["webhook-signature"] ?? "",
        headers,
        body,
        deliveryId: envelope.delivery_id,
        sequence: envelope.sequence,
        receivedAt: Date.now(),
      };
      received.push(entry);
      const answer = respond(entry, received);
      const send = () => {
        done();
        if (response.destroyed) return;
        response.writeHead(answer.status, answer.headers ?? {});
        response.end();
      };
      if (answer.delayMs) {
        const timer = setTimeout(() => {
          heldBack.delete(timer);
          send();
        }, answer.delayMs);
        heldBack.add(timer);
      } else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/hooks`,
    port,
    received,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    respond(next) {
      respond = next;
    },
    async close() {
      for (const timer of heldBack) clearTimeout(timer);
      heldBack.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
