/**
 * The operator's side of a fleet, set up through the operator API as an operator would: for each
 * vehicle a messenger, the vehicle with its tracker provider and provider token (so geo-ingest
 * checks X-Provider-Token on every position), and a round of its own, started. Every vehicle is
 * then in an active round for the whole soak, so a position answered 200 is a stored one (geo-ingest
 * answers 200 without storing for a vehicle outside an active round). The deliveries the soak
 * creates are spread over these rounds as they come.
 */
import { randomBytes } from "node:crypto";
import { waitFor } from "@dos/service-kit/testing";
import { call, opsHeaders } from "../src/client.ts";
import type { Tracker } from "./tracker-fleet.ts";

/** A few tracker providers, as a real fleet mixes boxes from several vendors. */
const PROVIDERS = ["acme-telematics", "geobox", "fleetlink"];

/** The External IDs of the soak's vehicles start with this. */
export const FLEET_PREFIX = "TRK-";

export interface FleetVehicle extends Tracker {
  vehicleId: number;
  roundId: number;
}

async function ops(opsUrl: string, method: string, path: string, body?: unknown) {
  const response = await call(`${opsUrl}/ops/v1${path}`, method, opsHeaders, body);
  if (response.status >= 300) {
    throw new Error(`${method} /ops/v1${path}: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response.body as { id: number };
}

/**
 * Creates `count` vehicles, each with a messenger and an active round, `concurrency` at a time,
 * then waits until geo-ingest holds every one as active (its FLEET bucket watch).
 */
export async function setUpFleet(opsUrl: string, geoUrl: string, count: number, concurrency = 16) {
  const fleet: FleetVehicle[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const externalId = `${FLEET_PREFIX}${String(i + 1).padStart(5, "0")}`;
      const provider = PROVIDERS[i % PROVIDERS.length] as string;
      const token = randomBytes(18).toString("base64url");
      const messenger = await ops(opsUrl, "POST", "/messengers", { name: `Courier ${i + 1}`, phone: "+33600000000" });
      const vehicle = await ops(opsUrl, "POST", "/vehicles", {
        external_id: externalId,
        provider,
        label: `Van ${i + 1}`,
        provider_token: token,
      });
      const round = await ops(opsUrl, "POST", "/rounds", { messenger_id: messenger.id, vehicle_id: vehicle.id });
      await ops(opsUrl, "POST", `/rounds/${round.id}/start`);
      fleet[i] = { externalId, provider, token, vehicleId: vehicle.id, roundId: round.id };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await waitFor(
    async () => (await metricValue(geoUrl, "geo_fleet_active_vehicles")) >= count,
    120_000,
    `geo-ingest holding the ${count} vehicles as in an active round`,
  );
  return fleet;
}

/** The sum of a metric's series as a service exposes it on /metrics, filtered by a label. */
export async function metricValue(url: string, name: string, label = ""): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (label && !line.includes(label)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}
