/**
 * The live map's data: the console's event stream (GET /api/staff/live, server-sent events) read
 * with fetch, so that a refusal's status and messages can be shown (EventSource hides them), and
 * kept as the fleet: the snapshot, then each batch of positions. The stream is opened again after
 * a network loss or a console restart, later when the console says how long to wait (429), and
 * not after the session ended.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { LivePositionsEvent, LiveSnapshotEvent } from "../../../../src/shared/page-shapes.ts";

/** A vehicle's state as the page says it, in words (its colour and shape on the map follow it). */
export type LiveState = "on time" | "late" | "no position for 2 min";

/** How each state is drawn: its image on the map, its shape and colour (the legend and the table say the same). */
export const STATE_ICONS: Record<
  LiveState,
  { image: string; shape: "circle" | "triangle" | "square"; colour: string }
> = {
  "on time": { image: "live-on-time", shape: "circle", colour: "#047857" },
  late: { image: "live-late", shape: "triangle", colour: "#b91c1c" },
  "no position for 2 min": { image: "live-no-position", shape: "square", colour: "#4b5563" },
};

export interface LiveVehicle {
  id: number;
  externalId: string;
  label: string | null;
  roundId: number;
  messenger: string;
  /** The next task's ETA is past its slot end, or the slot ended (as of the last snapshot). */
  late: boolean;
  position: { latitude: number; longitude: number; recordedMs: number } | null;
}

export type LiveConnection =
  | { kind: "connecting" }
  | { kind: "live" }
  | { kind: "retrying"; message: string }
  | { kind: "stopped"; message: string };

export interface LiveFleetView {
  vehicles: LiveVehicle[];
  /** The console's clock minus the browser's, from the last event: ages are the console's. */
  clockOffsetMs: number;
  noPositionAfterMs: number;
  connection: LiveConnection;
  /** When the last event arrived (browser clock), 0 before the first. */
  updatedAt: number;
}

/** The state of a vehicle at a time (the console's clock): no recent position wins over late. */
export function stateOf(vehicle: LiveVehicle, consoleNow: number, noPositionAfterMs: number): LiveState {
  if (!vehicle.position || consoleNow - vehicle.position.recordedMs > noPositionAfterMs) return "no position for 2 min";
  return vehicle.late ? "late" : "on time";
}

/** The round page of a vehicle's round. */
export const roundPath = (roundId: number) => `/staff/dispatch/rounds/${roundId}`;

const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 30_000;

type Outcome =
  | { kind: "ended"; reason: string; reconnect: boolean }
  | { kind: "refused"; status: number; message: string; retryAfterMs: number }
  | { kind: "lost" };

/** Reads one stream until it ends; each event goes to `onEvent`. */
async function readStream(signal: AbortSignal, onEvent: (name: string, data: string) => void): Promise<Outcome> {
  let response: Response;
  try {
    response = await fetch("/api/staff/live", {
      headers: { accept: "text/event-stream" },
      credentials: "same-origin",
      signal,
    });
  } catch {
    return { kind: "lost" };
  }
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => undefined)) as { errors?: string[] } | undefined;
    const retryAfter = Number(response.headers.get("retry-after"));
    return {
      kind: "refused",
      status: response.status,
      message: body?.errors?.join("; ") ?? `the console answered ${response.status}`,
      retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : RETRY_FIRST_MS,
    };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let ended: { reason: string; reconnect: boolean } | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (block.startsWith(":")) continue;
        const name = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
        const data = /^data: (.*)$/m.exec(block)?.[1] ?? "";
        if (name === "ended") ended = JSON.parse(data) as { reason: string; reconnect: boolean };
        else onEvent(name, data);
      }
    }
  } catch {
    // The connection broke (or the page left): like an end without a reason.
  }
  return ended === undefined ? { kind: "lost" } : { kind: "ended", ...ended };
}

/** The fleet as the stream tells it, kept current while the page is open. */
export function useLiveFleet(): LiveFleetView {
  const queryClient = useQueryClient();
  const [view, setView] = useState<LiveFleetView>({
    vehicles: [],
    clockOffsetMs: 0,
    noPositionAfterMs: 2 * 60_000,
    connection: { kind: "connecting" },
    updatedAt: 0,
  });

  useEffect(() => {
    const abort = new AbortController();
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    // The vehicles by id, and their order (the snapshot's): a batch replaces the vehicles it moves.
    let byId = new Map<number, LiveVehicle>();
    let order: number[] = [];
    // Whether the stream being read brought anything: after one that did, the wait starts over.
    let received = false;

    const publish = (patch: Partial<LiveFleetView>) =>
      setView((previous) => ({
        ...previous,
        ...patch,
        vehicles: order.map((id) => byId.get(id) as LiveVehicle),
      }));

    const onEvent = (name: string, data: string) => {
      received = true;
      if (name === "snapshot") {
        const snapshot = JSON.parse(data) as LiveSnapshotEvent;
        const next = new Map<number, LiveVehicle>();
        for (const v of snapshot.vehicles) {
          const known = byId.get(v.vehicle_id)?.position;
          const given = v.position && {
            latitude: v.position.latitude,
            longitude: v.position.longitude,
            recordedMs: v.position.recorded_ms,
          };
          // A position received since the snapshot was read is newer than the snapshot's.
          const position = known && (!given || known.recordedMs > given.recordedMs) ? known : given;
          next.set(v.vehicle_id, {
            id: v.vehicle_id,
            externalId: v.external_id,
            label: v.label,
            roundId: v.round_id,
            messenger: v.messenger,
            late: v.late,
            position,
          });
        }
        byId = next;
        order = snapshot.vehicles.map((v) => v.vehicle_id);
        publish({
          clockOffsetMs: snapshot.now - Date.now(),
          noPositionAfterMs: snapshot.no_position_after_ms,
          connection: { kind: "live" },
          updatedAt: Date.now(),
        });
      } else if (name === "positions") {
        const batch = JSON.parse(data) as LivePositionsEvent;
        for (const [id, latitude, longitude, recordedMs] of batch.positions) {
          const vehicle = byId.get(id);
          if (!vehicle || (vehicle.position && vehicle.position.recordedMs > recordedMs)) continue;
          byId.set(id, { ...vehicle, position: { latitude, longitude, recordedMs } });
        }
        publish({ clockOffsetMs: batch.now - Date.now(), connection: { kind: "live" }, updatedAt: Date.now() });
      }
    };

    const run = async (delayMs: number) => {
      received = false;
      const outcome = await readStream(abort.signal, onEvent);
      if (abort.signal.aborted) return;
      let message: string;
      let nextDelay = received ? RETRY_FIRST_MS : Math.min(RETRY_MAX_MS, delayMs * 2);
      const stop = (reason: string) => {
        publish({ connection: { kind: "stopped", message: `The live map stopped: ${reason}.` } });
        // The shell learns the session is over too.
        void queryClient.invalidateQueries({ queryKey: ["staff-session"] });
      };
      if (outcome.kind === "ended" && !outcome.reconnect) {
        stop(outcome.reason);
        return;
      }
      if (outcome.kind === "refused") {
        if (outcome.status === 404 || outcome.status === 401) {
          stop("signed out");
          return;
        }
        message = `The console refused the live map: ${outcome.message}.`;
        nextDelay = outcome.retryAfterMs;
      } else {
        message =
          outcome.kind === "ended"
            ? `The console ended the map: ${outcome.reason}.`
            : "The connection to the console was lost.";
      }
      publish({
        connection: { kind: "retrying", message: `${message} Trying again in ${Math.round(nextDelay / 1000)} s…` },
      });
      retryTimer = setTimeout(() => void run(nextDelay), nextDelay);
    };
    void run(RETRY_FIRST_MS);

    return () => {
      abort.abort();
      if (retryTimer) clearTimeout(retryTimer);
    };
  }, [queryClient]);

  return view;
}
