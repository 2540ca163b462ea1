/**
 * The live map's open streams on this replica (`GET /api/staff/live`, server-sent events): each
 * starts with the fleet as delivery-api shows it to the person (`GET /ops/v1/fleet/live` with the
 * session's own staff token, so roles stay delivery-api's), then gets the positions of its
 * vehicles from the bus (live-positions.ts: one subscription for every stream), one batched
 * event a second at most, and the fleet again every CONSOLE_LIVE_SNAPSHOT_SECONDS (vehicles that
 * joined or left active rounds, lateness) when it changed.
 *
 * Bounded: streams per person and in all (429 beyond); a browser that does not read never makes
 * the console buffer more than what is already written: while its socket does not drain, only the
 * latest position of each of its vehicles (and the latest snapshot) waits, and a connection on which
 * nothing moves for the kit's HTTP_IDLE_TIMEOUT_MS is closed by the server. Heartbeats keep a
 * quiet stream open through proxies and show a dead one. A stream ends with its session (sign-out
 * on this replica at once; elsewhere, expiry or a token delivery-api refuses, at the next check)
 * and at shutdown.
 *
 * Events: `snapshot` `{now, no_position_after_ms, vehicles: [{vehicle_id, external_id, label,
 * round_id, messenger, late, position: {latitude, longitude, recorded_ms} | null}]}`; `positions`
 * `{now, positions: [[vehicle_id, latitude, longitude, recorded_ms], ...]}`; `ended` `{reason,
 * reconnect}` (reconnect: true at shutdown, where another replica takes the stream).
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { HttpError } from "@dos/service-kit";
import type { Logger } from "pino";
import type { LiveFleetPage } from "../delivery-api/ops-client.ts";
import type { StaffSessionUser } from "../sessions/sessions.service.ts";
import type { LiveVehicleView } from "../shared/page-shapes.ts";
import type { LivePosition, LivePositions } from "./live-positions.ts";

/** delivery-api's rule, also applied between two snapshots by the page: no position for 2 minutes. */
const NO_POSITION_AFTER_MS = 2 * 60_000;
/** Pages read at most per snapshot: 100,000 vehicles. */
const MAX_PAGES = 20;
/** Snapshots read at once for the refreshes of every stream: delivery-api is not asked for more. */
const REFRESHES_AT_ONCE = 4;

export interface LiveStreamsOptions {
  positions: LivePositions;
  /** A page of the fleet as delivery-api shows it to this staff token; undefined when it refuses the token. */
  readPage(staffToken: string, after: number): Promise<LiveFleetPage | undefined>;
  /** Which of these sessions are live; ending one (the token was refused). */
  sessions: { liveOf(ids: number[]): Promise<Set<number>>; end(sessionId: number): Promise<void> };
  snapshotMs: number;
  /** A comment line after this long without a write: well within the server's idle timeout. */
  heartbeatMs: number;
  perPerson: number;
  total: number;
  logger: Logger;
  /** Called with the bytes of each write to a stream (metrics). */
  onWritten(bytes: number): void;
  /** Called with the positions a stream skipped: a newer one, or a snapshot, replaced them unwritten (metrics). */
  onSuperseded(positions: number): void;
}

interface Stream {
  raw: ServerResponse;
  user: StaffSessionUser;
  /** External ID → vehicle id, of the vehicles of its latest snapshot. */
  vehicles: Map<string, number>;
  /** Positions not written yet, the latest per vehicle (vehicle id → its entry in a positions event). */
  pending: Map<number, string>;
  /** A snapshot not written yet (the socket was not draining). */
  pendingSnapshot: string | undefined;
  /** The last snapshot's vehicles, hashed. */
  snapshotDigest: string | undefined;
  lastWriteAt: number;
  nextRefreshAt: number;
  refreshing: boolean;
}

type LiveVehicle = LiveFleetPage["vehicles"][number];

/** Late as delivery-api says: the next task's ETA is past its slot end, or the slot ended. */
function isLate(vehicle: LiveVehicle, now: number): boolean {
  const task = vehicle.next_task;
  if (!task) return false;
  const slotEnd = Date.parse(task.slot_ending_at);
  return slotEnd < now || (task.eta !== null && Date.parse(task.eta) > slotEnd);
}

const event = (name: string, data: string) => `event: ${name}\ndata: ${data}\n\n`;

export function createLiveStreams(options: LiveStreamsOptions) {
  const { positions, logger } = options;
  const streams = new Set<Stream>();
  // Slots are taken at admission, before the snapshot is read, so concurrent opens cannot overrun.
  const slotsOfPerson = new Map<number, number>();
  let slots = 0;
  let timer: NodeJS.Timeout | undefined;
  let refreshesRunning = 0;
  let lastSessionCheckAt = Date.now();
  let checking = false;
  let checkAgain = false;

  function release(staffId: number) {
    slots--;
    const n = (slotsOfPerson.get(staffId) ?? 0) - 1;
    if (n > 0) slotsOfPerson.set(staffId, n);
    else slotsOfPerson.delete(staffId);
  }

  function write(stream: Stream, text: string) {
    stream.raw.write(text);
    stream.lastWriteAt = Date.now();
    options.onWritten(Buffer.byteLength(text));
  }

  /** Writes what waits, unless the socket still holds unread data: then it keeps waiting (for 'drain'). */
  function flush(stream: Stream) {
    if (stream.raw.writableNeedDrain || stream.raw.destroyed) return;
    if (stream.pendingSnapshot !== undefined) {
      write(stream, stream.pendingSnapshot);
      stream.pendingSnapshot = undefined;
    }
    // After a snapshot that filled the socket, the positions wait too.
    if (stream.pending.size > 0 && !stream.raw.writableNeedDrain) {
      const entries = [...stream.pending.values()].join(",");
      stream.pending.clear();
      write(stream, event("positions", `{"now":${Date.now()},"positions":[${entries}]}`));
    }
  }

  /** Ends a stream, telling the page why and whether opening it again makes sense (another replica). */
  function end(stream: Stream, reason: string, reconnect = false) {
    if (!streams.delete(stream)) return;
    release(stream.user.staffId);
    if (!stream.raw.destroyed) {
      stream.raw.write(event("ended", JSON.stringify({ reason, reconnect })));
      stream.raw.end();
    }
    if (streams.size === 0) {
      positions.stop();
      clearInterval(timer);
      timer = undefined;
    }
  }

  /** The positions of a batch to each stream whose snapshot has the vehicle. */
  function deliver(batch: Map<string, LivePosition>) {
    let superseded = 0;
    for (const stream of streams) {
      for (const [externalId, position] of batch) {
        const id = stream.vehicles.get(externalId);
        if (id === undefined) continue;
        if (stream.pending.has(id)) superseded++;
        stream.pending.set(id, `[${id}${position.wire}`);
      }
      flush(stream);
    }
    if (superseded > 0) options.onSuperseded(superseded);
  }

  /** The fleet as delivery-api shows it to the session, brought up to the latest positions seen on the bus. */
  async function readSnapshot(user: StaffSessionUser): Promise<LiveVehicleView[] | undefined> {
    const vehicles: LiveVehicleView[] = [];
    let after = 0;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await options.readPage(user.staffToken, after);
      if (!answer) return undefined;
      const now = Date.now();
      for (const vehicle of answer.vehicles) {
        const stored = vehicle.position;
        const storedMs = stored ? Date.parse(stored.recorded_at) : Number.NEGATIVE_INFINITY;
        const seen = positions.latest(vehicle.external_id);
        const position =
          seen && seen.recordedMs > storedMs
            ? { latitude: seen.latitude, longitude: seen.longitude, recorded_ms: seen.recordedMs }
            : stored && { latitude: stored.latitude, longitude: stored.longitude, recorded_ms: storedMs };
        vehicles.push({
          vehicle_id: vehicle.vehicle_id,
          external_id: vehicle.external_id,
          label: vehicle.label,
          round_id: vehicle.round_id,
          messenger: vehicle.messenger.name,
          late: isLate(vehicle, now),
          position,
        });
      }
      if (answer.next_after === null) break;
      after = answer.next_after;
    }
    return vehicles;
  }

  function takeSnapshot(stream: Stream, vehicles: LiveVehicleView[]) {
    const body = JSON.stringify(vehicles);
    // A fleet read again as it was (nothing moved, joined or left) is not sent again.
    const digest = createHash("sha1").update(body).digest("base64");
    if (digest === stream.snapshotDigest) return;
    stream.snapshotDigest = digest;
    stream.vehicles = new Map(vehicles.map((v) => [v.external_id, v.vehicle_id]));
    // The snapshot carries every position up to now: what waited is in it.
    if (stream.pending.size > 0) options.onSuperseded(stream.pending.size);
    stream.pending.clear();
    stream.pendingSnapshot = event(
      "snapshot",
      `{"now":${Date.now()},"no_position_after_ms":${NO_POSITION_AFTER_MS},"vehicles":${body}}`,
    );
    flush(stream);
  }

  async function refresh(stream: Stream) {
    stream.refreshing = true;
    refreshesRunning++;
    try {
      const vehicles = await readSnapshot(stream.user);
      if (!streams.has(stream)) return;
      if (!vehicles) {
        // delivery-api refuses the session's token (revoked, the person disabled): the session is over.
        await options.sessions.end(stream.user.sessionId);
        end(stream, "the staff session has ended: sign in again");
        return;
      }
      takeSnapshot(stream, vehicles);
    } catch (error) {
      // delivery-api not answering: the stream keeps its vehicles and tries again next time.
      logger.warn({ err: error }, "live map: the fleet could not be read again; retrying");
    } finally {
      stream.refreshing = false;
      stream.nextRefreshAt = Date.now() + options.snapshotMs;
      refreshesRunning--;
    }
  }

  /** Ends the streams whose session is over (signed out, expired, ended on another replica). */
  function checkSessions() {
    lastSessionCheckAt = Date.now();
    // One check at a time; a session ended while one runs gets the next.
    if (checking) {
      checkAgain = true;
      return;
    }
    checking = true;
    void (async () => {
      try {
        // The streams open now: one opened during the query is not judged by it.
        const checked = [...streams];
        const live = await options.sessions.liveOf([...new Set(checked.map((s) => s.user.sessionId))]);
        for (const stream of checked) if (!live.has(stream.user.sessionId)) end(stream, "signed out");
      } catch (error) {
        logger.warn({ err: error }, "live map: the sessions could not be checked; retrying");
      } finally {
        checking = false;
        if (checkAgain) {
          checkAgain = false;
          checkSessions();
        }
      }
    })();
  }

  /** Every second: heartbeats, refreshes that are due (a few at a time), the sessions now and then. */
  function upkeep() {
    const now = Date.now();
    for (const stream of streams) {
      if (stream.raw.destroyed) {
        end(stream, "closed");
        continue;
      }
      if (now - stream.lastWriteAt >= options.heartbeatMs && !stream.raw.writableNeedDrain)
        write(stream, ": keep-alive\n\n");
      if (now >= stream.nextRefreshAt && !stream.refreshing && refreshesRunning < REFRESHES_AT_ONCE) {
        void refresh(stream);
      }
    }
    if (now - lastSessionCheckAt >= options.snapshotMs) checkSessions();
  }

  /** Takes a slot of the person's and of the replica's budget, or refuses with a 429. */
  function admit(staffId: number) {
    const full =
      (slotsOfPerson.get(staffId) ?? 0) >= options.perPerson
        ? `a staff person may have ${options.perPerson} live maps open at once: close one`
        : slots >= options.total
          ? `the console has ${options.total} live maps open already: retry later`
          : null;
    if (full) throw new HttpError(429, full, { "retry-after": String(Math.ceil(options.heartbeatMs / 1000)) });
    slots++;
    slotsOfPerson.set(staffId, (slotsOfPerson.get(staffId) ?? 0) + 1);
  }

  return {
    /**
     * Opens the live map of a staff session: refused (429) over a budget, 401 when delivery-api
     * refuses the session's token (the session ends), 503 when it does not answer; else `start`
     * turns the request into the event stream, which starts with the snapshot.
     */
    async open(user: StaffSessionUser, start: () => ServerResponse) {
      admit(user.staffId);
      let vehicles: LiveVehicleView[] | undefined;
      try {
        vehicles = await readSnapshot(user);
      } catch (error) {
        release(user.staffId);
        throw error;
      }
      if (!vehicles) {
        release(user.staffId);
        await options.sessions.end(user.sessionId);
        throw new HttpError(401, "the staff session has ended: sign in again");
      }
      const raw = start();
      const now = Date.now();
      const stream: Stream = {
        raw,
        user,
        vehicles: new Map(),
        pending: new Map(),
        pendingSnapshot: undefined,
        snapshotDigest: undefined,
        lastWriteAt: now,
        nextRefreshAt: now + options.snapshotMs,
        refreshing: false,
      };
      streams.add(stream);
      positions.listen(deliver);
      timer ??= setInterval(upkeep, 1000);
      raw.on("drain", () => flush(stream));
      raw.on("close", () => end(stream, "closed"));
      takeSnapshot(stream, vehicles);
      // Closed while the snapshot was read: that 'close' came before the listener above.
      if (raw.destroyed) end(stream, "closed");
    },

    /** Sessions ended on this replica: the streams check theirs now rather than at the next interval. */
    sessionsEnded() {
      if (streams.size > 0) checkSessions();
    },

    /** Open streams, what their sockets hold unwritten, the positions waiting (metrics). */
    stats() {
      let buffered = 0;
      let pending = 0;
      for (const stream of streams) {
        buffered += stream.raw.writableLength;
        pending += stream.pending.size;
      }
      return { streams: streams.size, buffered, pending };
    },

    /** Ends every stream (shutdown): EventSource-like clients reconnect to another replica. */
    close() {
      for (const stream of streams) end(stream, "the console is restarting", true);
    },
  };
}
export type LiveStreams = ReturnType<typeof createLiveStreams>;
