/**
 * A steady, bounded load on the running system, as a shop and a tracker fleet make it: creates
 * and comment updates on the client API, positions on geo-ingest. Every request and its answer is
 * recorded, so a test can say afterwards what was accepted (and must not be lost) and how each
 * refusal looked while a fault lasted. Requests in flight are capped; a tick with no free slot is
 * skipped, so a stalled system is not buried under a backlog of retries.
 */
import type { SeededAccount } from "./client.ts";
import { clientHeaders, outboundDelivery } from "./client.ts";

export type LoadKind = "create" | "update" | "position";

export interface LoadResult {
  kind: LoadKind;
  startedAt: number;
  ms: number;
  /** 0 when no HTTP answer came (refused connection, timeout). */
  status: number;
  retryAfter: string | null;
  body: string;
  /** The delivery created or updated; the position's vehicle and timestamp. */
  deliveryId?: number;
  position?: { vehicle: string; recordedAt: string };
}

export interface LoadOptions {
  api: string;
  geo: string;
  account: SeededAccount;
  vehicles: Array<{ externalId: string; provider: string }>;
  /** Requests per second of each kind. */
  rates: Partial<Record<LoadKind, number>>;
  maxInFlight?: number;
  timeoutMs?: number;
}

export interface Load {
  results: LoadResult[];
  /** Ids of the deliveries whose create was answered 201. */
  created(): number[];
  /** Positions answered 200. */
  acceptedPositions(): Array<{ vehicle: string; recordedAt: string }>;
  between(from: number, to: number, kind?: LoadKind): LoadResult[];
  stop(): Promise<void>;
}

export function startLoad(options: LoadOptions): Load {
  const results: LoadResult[] = [];
  const inFlight = new Set<Promise<void>>();
  const maxInFlight = options.maxInFlight ?? 16;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const created: number[] = [];
  let counter = 0;
  let vehicleIndex = 0;
  let lastTimestamp = 0;

  async function send(kind: LoadKind, url: string, method: string, headers: Record<string, string>, body: unknown) {
    const startedAt = Date.now();
    const result: LoadResult = { kind, startedAt, ms: 0, status: 0, retryAfter: null, body: "" };
    try {
      const response = await fetch(url, {
        method,
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      result.status = response.status;
      result.retryAfter = response.headers.get("retry-after");
      result.body = await response.text();
    } catch (error) {
      result.body = (error as Error).message;
    }
    result.ms = Date.now() - startedAt;
    results.push(result);
    return result;
  }

  const requests: Record<LoadKind, () => Promise<void>> = {
    async create() {
      const result = await send(
        "create",
        `${options.api}/api/v2/deliveries`,
        "POST",
        clientHeaders(options.account),
        outboundDelivery(options.account, `load-${++counter}`),
      );
      if (result.status === 201) {
        result.deliveryId = (JSON.parse(result.body) as { id: number }).id;
        created.push(result.deliveryId);
      }
    },
    async update() {
      const id = created[Math.floor(Math.random() * created.length)];
      if (id === undefined) return;
      const result = await send(
        "update",
        `${options.api}/api/v2/deliveries/${id}`,
        "PATCH",
        clientHeaders(options.account),
        { comments: `update ${++counter}` },
      );
      result.deliveryId = id;
    },
    async position() {
      const vehicle = options.vehicles[vehicleIndex++ % options.vehicles.length];
      if (!vehicle) return;
      // Distinct timestamps: (vehicle, timestamp) is the position's identity in the store.
      const now = Math.max(Date.now(), lastTimestamp + 1);
      lastTimestamp = now;
      const recordedAt = new Date(now).toISOString();
      const result = await send(
        "position",
        `${options.geo}/external/vehicles/${encodeURIComponent(vehicle.externalId)}/geolocations`,
        "POST",
        {},
        { latitude: 48.86 + Math.random() / 100, longitude: 2.34, provider: vehicle.provider, timestamp: recordedAt },
      );
      result.position = { vehicle: vehicle.externalId, recordedAt };
    },
  };

  const timers = Object.entries(options.rates).map(([kind, rate]) =>
    setInterval(
      () => {
        if (inFlight.size >= maxInFlight) return;
        const request = requests[kind as LoadKind]().finally(() => inFlight.delete(request));
        inFlight.add(request);
      },
      1000 / (rate ?? 1),
    ),
  );

  return {
    results,
    created: () => [...created],
    acceptedPositions: () =>
      results
        .filter((r) => r.kind === "position" && r.status === 200)
        .map((r) => r.position as LoadResult["position"] & {}),
    between: (from, to, kind) =>
      results.filter((r) => r.startedAt >= from && r.startedAt < to && (kind === undefined || r.kind === kind)),
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

/** Counts answers by status, e.g. `{"201": 120, "503": 14}`, for messages and reports. */
export function statusCounts(results: LoadResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) counts[`${r.kind} ${r.status}`] = (counts[`${r.kind} ${r.status}`] ?? 0) + 1;
  return counts;
}
