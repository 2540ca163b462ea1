/**
 * The operator and the fleet as the e2e tests play them: a messenger, a tracked vehicle, a round
 * holding deliveries, task progress through the operator API, and tracker positions through
 * geo-ingest's public endpoint; the stored track read back from geo-ingest's operator endpoint.
 */
import { randomBytes } from "node:crypto";
import { call, opsHeaders } from "./client.ts";

export const GEO_OPS_TOKEN = "e2e-geo-ops-token-0123456789abcdef";

export interface RoundTask {
  task_id: number;
  kind: "pickup" | "dropoff";
  delivery_id: number;
}

export interface Round {
  id: number;
  vehicle: { externalId: string; provider: string };
  tasks: RoundTask[];
}

export interface StoredPosition {
  latitude: number;
  longitude: number;
  recorded_at: string;
}

export function operator(opsUrl: string, geoUrl: string) {
  /** A tracker position; 404 is retried while geo-ingest has not yet read the new vehicle. */
  const position = async (
    vehicle: Round["vehicle"],
    latitude: number,
    longitude: number,
    timestamp: Date,
  ): Promise<number> => {
    const url = `${geoUrl}/external/vehicles/${encodeURIComponent(vehicle.externalId)}/geolocations`;
    const body = { latitude, longitude, provider: vehicle.provider, timestamp: timestamp.toISOString() };
    for (let attempt = 0; ; attempt++) {
      const response = await call(url, "POST", {}, body);
      if ((response.status !== 404 && response.status !== 429) || attempt >= 50) return response.status;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const track = async (roundId: number): Promise<StoredPosition[]> => {
    const response = await call(`${geoUrl}/ops/v1/rounds/${roundId}/track`, "GET", {
      authorization: `Bearer ${GEO_OPS_TOKEN}`,
    });
    if (response.status !== 200) throw new Error(`track of round ${roundId}: ${response.status}`);
    return (response.body as { positions: StoredPosition[] }).positions;
  };

  /**
   * A tracker position sent until the round's track holds it. A round's start reaches geo-ingest
   * through the FLEET bucket shortly after the start is answered, and the vehicle is known from its
   * creation on: in between, a position is answered 200 and not stored (a vehicle without an active
   * round, as the spec says), so neither the end of the 404s nor a 200 tells that geo-ingest knows
   * the round. The same place sent again at the same timestamp is stored once.
   */
  const storedPosition = async (round: Round, latitude: number, longitude: number, timestamp: Date) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const status = await position(round.vehicle, latitude, longitude, timestamp);
      if (status !== 200) throw new Error(`position of round ${round.id}: ${status}`);
      const stored = (await track(round.id)).some(
        (p) =>
          p.latitude === latitude && p.longitude === longitude && Date.parse(p.recorded_at) === timestamp.getTime(),
      );
      if (stored) return;
      if (Date.now() > deadline) throw new Error(`round ${round.id}: geo-ingest stored no position for 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const ops = async (method: string, path: string, body?: unknown) => {
    const response = await call(`${opsUrl}/ops/v1${path}`, method, opsHeaders, body);
    if (response.status >= 300) {
      throw new Error(`${method} /ops/v1${path}: ${response.status} ${JSON.stringify(response.body)}`);
    }
    return response.body;
  };

  return {
    ops,
    /** A messenger and a fresh vehicle, a round with the deliveries (→ scheduled), started. */
    async startRound(deliveryIds: number[]): Promise<Round> {
      const suffix = randomBytes(3).toString("hex");
      const messenger = (await ops("POST", "/messengers", { name: `Courier ${suffix}`, phone: "+33600000000" })) as {
        id: number;
      };
      const vehicle = { externalId: `E2E-${suffix}`, provider: "e2e-tracker" };
      const created = (await ops("POST", "/vehicles", {
        external_id: vehicle.externalId,
        provider: vehicle.provider,
      })) as { id: number };
      const round = (await ops("POST", "/rounds", {
        messenger_id: messenger.id,
        vehicle_id: created.id,
        delivery_ids: deliveryIds,
      })) as { id: number; tasks: RoundTask[] };
      await ops("POST", `/rounds/${round.id}/start`);
      return { id: round.id, vehicle, tasks: round.tasks };
    },
    task(round: Round, deliveryId: number, kind: "pickup" | "dropoff"): number {
      const found = round.tasks.find((t) => t.delivery_id === deliveryId && t.kind === kind);
      if (!found) throw new Error(`no ${kind} task of delivery ${deliveryId} in round ${round.id}`);
      return found.task_id;
    },
    position,
    track,
    storedPosition,
  };
}

export type Operator = ReturnType<typeof operator>;
