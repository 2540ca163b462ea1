/**
 * A client's webhook endpoint as an integrator would write it: a real HTTP server on loopback
 * that verifies every request with the `standardwebhooks` library (the one our docs recommend),
 * records what arrived, and can go down and come back on the same port (a receiver outage).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { call } from "./client.ts";

export interface WebhookEvent {
  id: string;
  type: string;
  account_id: number;
  delivery_id: number;
  sequence: number;
  payload: { previous_status?: string; delivery: { id: number; status: string } & Record<string, unknown> };
}

export interface ReceivedWebhook {
  webhookId: string;
  event: WebhookEvent;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  /** Every verified request, in arrival order (retries and duplicates included). */
  received: ReceivedWebhook[];
  /** Requests whose signature or timestamp did not verify, or whose webhook-id was not the event id. */
  rejected: string[];
  /** Verifies with the endpoint's secret, shown once when it was registered. */
  useSecret(secret: string): void;
  /** Answers this status instead of 204 while set (a failing endpoint). */
  failWith(status: number | null): void;
  /** Stops listening: connections are refused, as a receiver that is down. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** The first arrival of each event id, in arrival order. */
  firstArrivals(): ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const rejected: string[] = [];
  let verifier: Webhook | undefined;
  let failure: number | null = null;
  let server: http.Server | undefined;
  let port = 0;

  const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      let event: WebhookEvent;
      try {
        if (!verifier) throw new Error("no secret yet");
        event = verifier.verify(body, headers) as WebhookEvent;
        if (event.id !== headers["webhook-id"])
          throw new Error(`webhook-id ${headers["webhook-id"]} is not ${event.id}`);
      } catch (error) {
        rejected.push(`${headers["webhook-id"]}: ${(error as Error).message}`);
        response.writeHead(400).end();
        return;
      }
      if (failure !== null) {
        response.writeHead(failure).end();
        return;
      }
      received.push({ webhookId: headers["webhook-id"] ?? "", event, receivedAt: Date.now() });
      response.writeHead(204).end();
    });
  };

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const listener = http.createServer(handle);
      listener.once("error", reject);
      listener.listen(port, "127.0.0.1", () => {
        port = (listener.address() as AddressInfo).port;
        server = listener;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.closeAllConnections();
      server.close(() => resolve());
      server = undefined;
    });
  await start();

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    rejected,
    useSecret(secret) {
      verifier = new Webhook(secret);
    },
    failWith(status) {
      failure = status;
    },
    stop,
    start,
    firstArrivals() {
      const seen = new Set<string>();
      return received.filter((r) => !seen.has(r.webhookId) && seen.add(r.webhookId));
    },
    close: stop,
  };
}

/** Registers the receiver for every event kind of the account; the secret is kept by the receiver. */
export async function registerReceiver(
  apiUrl: string,
  headers: Record<string, string>,
  receiver: WebhookReceiver,
): Promise<{ id: string }> {
  const created = await call(`${apiUrl}/api/v2/webhooks`, "POST", headers, { url: receiver.url });
  if (created.status !== 201)
    throw new Error(`webhook registration: ${created.status} ${JSON.stringify(created.body)}`);
  const body = created.body as { id: string; secret: string };
  receiver.useSecret(body.secret);
  return { id: body.id };
}

/**
 * What an integrator relies on, for the given deliveries: each delivery's events arrived first in
 * sequence order from 1 without a gap, duplicates carry an id already seen with the same body.
 * Returns each delivery's event types in order.
 */
export function eventsByDelivery(receiver: WebhookReceiver, deliveryIds: number[]): Map<number, string[]> {
  const wanted = new Set(deliveryIds);
  const byDelivery = new Map<number, string[]>(deliveryIds.map((id) => [id, []]));
  for (const arrival of receiver.firstArrivals()) {
    if (!wanted.has(arrival.event.delivery_id)) continue;
    const types = byDelivery.get(arrival.event.delivery_id) as string[];
    if (arrival.event.sequence !== types.length + 1) {
      throw new Error(
        `delivery ${arrival.event.delivery_id}: event ${arrival.event.type} #${arrival.event.sequence} arrived after #${types.length}`,
      );
    }
    types.push(arrival.event.type);
  }
  return byDelivery;
}
