/**
 * The live map's snapshot: every vehicle in an active round at the round's current position (the
 * spec's rule between tracker and phone), with a state: `no_position` when the round has no
 * position younger than 2 minutes, else `late` when its next task's ETA is past that task's slot
 * end (or the slot ended and the task is not done), else `on_time`. The console keeps it current
 * from the bus (geo-ingest's latest positions); this read is where it starts, and where it comes
 * back to.
 */
import { formatTimestamp, Nullable, Timestamp } from "@dos/contracts";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { type CurrentPosition, choosePosition } from "../positions/positions.service.ts";
import { listLiveRounds } from "./live.repository.ts";

/** A round with no position younger than this is `no_position` (the 2 minutes). */
const NO_POSITION_AFTER_MS = 2 * 60_000;

const LiveState = Type.Union(
  ["on_time", "late", "no_position"].map((state) => Type.Literal(state)),
  {
    description:
      "no_position: none for 2 minutes; late: the next task's ETA is past its slot end, or its slot ended; " +
      "on_time otherwise (no_position wins over late).",
  },
);

const LiveVehicle = Type.Object(
  {
    vehicle_id: Type.Integer(),
    external_id: Type.String({ description: "Its subject token on the bus: `geo.positions.<fleet key>`." }),
    label: Nullable(Type.String()),
    round_id: Type.Integer(),
    round_started_at: Nullable(Timestamp),
    messenger: Type.Object({ id: Type.Integer(), name: Type.String() }, { additionalProperties: false }),
    position: Nullable(
      Type.Object(
        {
          latitude: Type.Number(),
          longitude: Type.Number(),
          recorded_at: Timestamp,
          source: Type.Union([Type.Literal("tracker"), Type.Literal("phone")]),
        },
        { additionalProperties: false },
      ),
    ),
    state: LiveState,
    next_task: Nullable(
      Type.Object(
        {
          task_id: Type.Integer(),
          delivery_id: Type.Integer(),
          kind: Type.Union([Type.Literal("pickup"), Type.Literal("dropoff")]),
          slot_ending_at: Timestamp,
          eta: Nullable(Timestamp),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: "LiveVehicle", additionalProperties: false },
);

export const LiveFleet = Type.Object(
  {
    generated_at: Timestamp,
    vehicles: Type.Array(LiveVehicle, { description: "By vehicle id." }),
    next_after: Nullable(Type.Integer({ description: "Pass as `after` for the next page; null on the last." })),
  },
  { title: "LiveFleet", additionalProperties: false },
);

export function createLiveService(db: Kysely<DB>, options: { trackerFreshMs: number }) {
  return {
    async snapshot(page: { after: number; limit: number }): Promise<Static<typeof LiveFleet>> {
      const rows = await listLiveRounds(db, page.after, page.limit + 1);
      const now = new Date();
      const shown = rows.slice(0, page.limit);
      return {
        generated_at: formatTimestamp(now),
        vehicles: shown.map((row) => {
          const stored: CurrentPosition[] = [];
          if (row.tracker_recorded_at) {
            stored.push({
              source: "tracker",
              latitude: row.tracker_latitude as number,
              longitude: row.tracker_longitude as number,
              recorded_at: row.tracker_recorded_at,
            });
          }
          if (row.phone_recorded_at) {
            stored.push({
              source: "phone",
              latitude: row.phone_latitude as number,
              longitude: row.phone_longitude as number,
              recorded_at: row.phone_recorded_at,
            });
          }
          const position = choosePosition(stored, now, options.trackerFreshMs);
          const slotEnd = row.slot_ending_at;
          const late =
            slotEnd !== null && ((row.eta !== null && row.eta > slotEnd) || slotEnd.getTime() < now.getTime());
          const state =
            !position || now.getTime() - position.recorded_at.getTime() > NO_POSITION_AFTER_MS
              ? "no_position"
              : late
                ? "late"
                : "on_time";
          return {
            vehicle_id: row.vehicle_id,
            external_id: row.external_id,
            label: row.label,
            round_id: row.round_id,
            round_started_at: row.started_at ? formatTimestamp(row.started_at) : null,
            messenger: { id: row.messenger_id, name: row.messenger_name },
            position: position && {
              latitude: position.latitude,
              longitude: position.longitude,
              recorded_at: formatTimestamp(position.recorded_at),
              source: position.source,
            },
            state,
            next_task:
              row.task_id === null
                ? null
                : {
                    task_id: row.task_id,
                    delivery_id: row.delivery_id as number,
                    kind: row.kind as "pickup" | "dropoff",
                    slot_ending_at: formatTimestamp(slotEnd as Date),
                    eta: row.eta ? formatTimestamp(row.eta) : null,
                  },
          };
        }),
        next_after: rows.length > page.limit ? (shown.at(-1)?.vehicle_id ?? null) : null,
      };
    },
  };
}
