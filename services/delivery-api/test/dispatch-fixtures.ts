/**
 * Fixtures of the dispatch tests: a local SMS provider (a real HTTP server that records what it
 * receives), an operator client, and a delivery taken to a round.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { natsNames } from "@dos/contracts";
import { Kvm } from "@nats-io/kv";
import { json, outboundBody } from "./delivery-fixtures.ts";
import type { TestAccount, TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient } from "./ops-client.ts";

export interface SmsProvider {
  url: string;
  received: Array<{ to: string; from: string; text: string }>;
  close(): Promise<void>;
}

export async function startSmsProvider(): Promise<SmsProvider> {
  const received: SmsProvider["received"] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push(JSON.parse(body));
      response.writeHead(202, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sms`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function fleetBucket(api: TestApi) {
  return new Kvm(api.nats.nc).open(natsNames(api.config.NATS_NAMESPACE).buckets.fleet);
}

export async function createDelivery(api: TestApi, account: TestAccount, overrides: Record<string, unknown> = {}) {
  const response = await api.app.inject({
    method: "POST",
    url: "/api/v2/deliveries",
    headers: account.headers,
    payload: outboundBody(account, overrides),
  });
  if (response.statusCode !== 201) throw new Error(`create failed: ${response.body}`);
  return json(response);
}

export async function getDelivery(api: TestApi, account: TestAccount, id: number) {
  return json(await api.app.inject({ method: "GET", url: `/api/v2/deliveries/${id}`, headers: account.headers }));
}

/** A messenger, a vehicle and a planned round holding the delivery; returns ids and task ids. */
export async function dispatch(ops: OpsClient, deliveryId: number, externalId: string) {
  const messenger = await ops.post("/messengers", { name: "Paul Courier", phone: "+33600000000" });
  const vehicle = await ops.post("/vehicles", { external_id: externalId, provider: "acme" });
  const round = await ops.post("/rounds", {
    messenger_id: messenger.body.id,
    vehicle_id: vehicle.body.id,
    delivery_ids: [deliveryId],
  });
  if (round.status !== 201) throw new Error(`round not created: ${JSON.stringify(round.body)}`);
  const tasks = round.body.tasks as Array<{ task_id: number; kind: string }>;
  return {
    messengerId: messenger.body.id as number,
    vehicleId: vehicle.body.id as number,
    roundId: round.body.id as number,
    pickupTask: tasks.find((t) => t.kind === "pickup")?.task_id as number,
    dropoffTask: tasks.find((t) => t.kind === "dropoff")?.task_id as number,
  };
}

export { opsClient };

/** The smallest valid PNG (1×1). */
export const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex",
);
export const JPEG = Buffer.from("ffd8ffe000104a46494600010100000100010000ffd9", "hex");
