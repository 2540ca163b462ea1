/**
 * The dispatch board: a calendar day's work as the operator's staff plan it. Deliveries to assign
 * are the saved ones whose main task's slot (the one the shop chose: the dropoff, or the pickup
 * of an inbound delivery) starts in the day; the day's rounds are those holding a task whose slot
 * starts in it, or created during it. The day is a day of the time zone asked for (UTC unless
 * told), answered with the instants it starts and ends.
 */
import { DeliveryStatus, Direction, formatTimestamp, Nullable, Timestamp } from "@dos/contracts";
import { refusesData, unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { TaskState, taskState } from "../rounds/rounds.service.ts";
import {
  countToAssign,
  type Day,
  type DeliveryCursor,
  dayBounds,
  listDayRounds,
  listToAssign,
  tasksOfDeliveries,
  tasksOfRounds,
} from "./board.repository.ts";

/** Tasks one page of rounds holds at most: rounds are added until the next would pass it (the first always fits). */
const ROUNDS_PAGE_TASK_BUDGET = 2000;

const stamp = (date: Date | null) => (date ? formatTimestamp(date) : null);

const TaskKind = Type.Union([Type.Literal("pickup"), Type.Literal("dropoff")]);
const AccountRef = Type.Object(
  { id: Type.Integer(), name: Type.String({ description: "The account's company name." }) },
  { additionalProperties: false },
);
const DayFields = {
  date: Type.String({ description: "The day asked for, YYYY-MM-DD." }),
  time_zone: Type.String({ description: "The time zone the day is of (IANA name)." }),
  starts_at: Timestamp,
  ends_at: Timestamp,
};

/** A task as the board shows it: where, when, and how far it went. */
const BoardTaskFields = {
  task_id: Type.Integer(),
  delivery_id: Type.Integer(),
  kind: TaskKind,
  state: TaskState,
  slot_starting_at: Timestamp,
  slot_ending_at: Timestamp,
  eta: Nullable(Timestamp),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  recipient_name: Type.String(),
  company_name: Nullable(Type.String()),
  address: Type.String({ description: "Street, postal code and city on one line." }),
};

const ToAssignDelivery = Type.Object(
  {
    id: Type.Integer(),
    status: DeliveryStatus,
    direction: Direction,
    client_order_reference: Nullable(Type.String()),
    created_at: Timestamp,
    account: Type.Composite([
      AccountRef,
      Type.Object({ environment: Type.Union([Type.Literal("production"), Type.Literal("test")]) }),
    ]),
    tasks: Type.Array(Type.Object(BoardTaskFields, { additionalProperties: false }), {
      description: "Pickup first.",
    }),
  },
  { title: "DispatchDelivery", additionalProperties: false },
);

/** A page of a day's deliveries still to assign. */
export const ToAssignPage = Type.Object(
  {
    ...DayFields,
    total: Type.Integer({ description: "Deliveries of the day to assign, all pages together." }),
    deliveries: Type.Array(ToAssignDelivery),
    next_after: Nullable(Type.String({ description: "Pass as `after` for the next page; null on the last." })),
  },
  { title: "DispatchToAssignPage", additionalProperties: false },
);

const DayRound = Type.Object(
  {
    id: Type.Integer(),
    status: Type.Union(["planned", "active", "ended"].map((status) => Type.Literal(status))),
    started_at: Nullable(Timestamp),
    ended_at: Nullable(Timestamp),
    created_at: Timestamp,
    messenger: Type.Object({ id: Type.Integer(), name: Type.String() }, { additionalProperties: false }),
    vehicle: Nullable(
      Type.Object(
        { id: Type.Integer(), external_id: Type.String(), label: Nullable(Type.String()) },
        { additionalProperties: false },
      ),
    ),
    tasks: Type.Array(
      Type.Object(
        {
          position: Type.Integer(),
          ...BoardTaskFields,
          delivery_status: DeliveryStatus,
          client_order_reference: Nullable(Type.String()),
          account: AccountRef,
        },
        { additionalProperties: false },
      ),
      { description: "In the round's order." },
    ),
  },
  { title: "DispatchRound", additionalProperties: false },
);

/** A page of a day's rounds with their tasks. */
export const DayRoundsPage = Type.Object(
  {
    ...DayFields,
    rounds: Type.Array(DayRound),
    next_after: Nullable(Type.Integer({ description: "Pass as `after` for the next page; null on the last." })),
  },
  { title: "DispatchRoundsPage", additionalProperties: false },
);

export interface DayQuery {
  date: string;
  timeZone: string;
}

type TaskRow = Awaited<ReturnType<typeof tasksOfDeliveries>>[number];

function boardTask(row: TaskRow) {
  return {
    task_id: row.task_id,
    delivery_id: row.delivery_id,
    kind: row.kind,
    state: taskState(row),
    slot_starting_at: formatTimestamp(row.slot_starting_at),
    slot_ending_at: formatTimestamp(row.slot_ending_at),
    eta: stamp(row.eta),
    started_at: stamp(row.started_at),
    completed_at: stamp(row.completed_at),
    recipient_name: row.recipient_name,
    company_name: row.company_name,
    address: `${row.address}, ${row.postal_code} ${row.city}`,
  };
}

/** `<slot start, ms since the epoch>-<delivery id>`: the position after which the next page starts. */
const formatCursor = (cursor: DeliveryCursor) => `${cursor.slotStartingAt.getTime()}-${cursor.deliveryId}`;

/** The cursor of an `after` parameter (checked against its pattern by the route). */
export function parseCursor(text: string): DeliveryCursor {
  const [ms, id] = text.split("-").map(Number) as [number, number];
  return { slotStartingAt: new Date(ms), deliveryId: id };
}

export function createBoardService(db: Kysely<DB>) {
  /** The day's instants, and the fields every board answer starts with. */
  async function day(query: DayQuery) {
    let bounds: { starts_at: Date; ends_at: Date };
    try {
      bounds = await dayBounds(db, query.date, query.timeZone);
    } catch (error) {
      // The route checked the date and the zone against the runtime's zones; PostgreSQL's own
      // list may still lack a zone.
      if (refusesData(error)) throw unprocessable(`querystring.time_zone ${query.timeZone} is not a known time zone`);
      throw error;
    }
    const range: Day = { startsAt: bounds.starts_at, endsAt: bounds.ends_at };
    const fields = {
      date: query.date,
      time_zone: query.timeZone,
      starts_at: formatTimestamp(bounds.starts_at),
      ends_at: formatTimestamp(bounds.ends_at),
    };
    return { range, fields };
  }

  return {
    async toAssign(
      query: DayQuery & { after?: DeliveryCursor | undefined; limit: number },
    ): Promise<Static<typeof ToAssignPage>> {
      const { range, fields } = await day(query);
      const [rows, total] = await Promise.all([
        listToAssign(db, range, query.after, query.limit + 1),
        countToAssign(db, range),
      ]);
      const page = rows.slice(0, query.limit);
      const tasks = Map.groupBy(
        await tasksOfDeliveries(
          db,
          page.map((row) => row.id),
        ),
        (task) => task.delivery_id,
      );
      const last = page.at(-1);
      return {
        ...fields,
        total,
        deliveries: page.map((row) => ({
          id: row.id,
          status: row.status,
          direction: row.direction,
          client_order_reference: row.client_order_reference,
          created_at: formatTimestamp(row.created_at),
          account: { id: row.account_id, name: row.account_name, environment: row.account_environment },
          tasks: (tasks.get(row.id) ?? [])
            .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "pickup" ? -1 : 1))
            .map(boardTask),
        })),
        next_after:
          rows.length > query.limit && last
            ? formatCursor({ slotStartingAt: last.main_slot_starting_at, deliveryId: last.id })
            : null,
      };
    },

    async rounds(query: DayQuery & { after: number; limit: number }): Promise<Static<typeof DayRoundsPage>> {
      const { range, fields } = await day(query);
      const rows = await listDayRounds(db, range, query.after, query.limit + 1);
      // Whole rounds only, within the task budget: a page never splits a round.
      const page: typeof rows = [];
      let tasks = 0;
      for (const row of rows.slice(0, query.limit)) {
        const count = Number(row.task_count ?? 0);
        if (page.length > 0 && tasks + count > ROUNDS_PAGE_TASK_BUDGET) break;
        page.push(row);
        tasks += count;
      }
      const byRound = Map.groupBy(
        await tasksOfRounds(
          db,
          page.map((row) => row.id),
        ),
        (task) => task.round_id,
      );
      const more = page.length < rows.length;
      return {
        ...fields,
        rounds: page.map((row) => ({
          id: row.id,
          status: row.status,
          started_at: stamp(row.started_at),
          ended_at: stamp(row.ended_at),
          created_at: formatTimestamp(row.created_at),
          messenger: { id: row.messenger_id, name: row.messenger_name },
          vehicle:
            row.vehicle_id === null
              ? null
              : { id: row.vehicle_id, external_id: row.vehicle_external_id as string, label: row.vehicle_label },
          tasks: (byRound.get(row.id) ?? []).map((task) => ({
            position: task.position,
            ...boardTask(task),
            delivery_status: task.delivery_status,
            client_order_reference: task.client_order_reference,
            account: { id: task.account_id, name: task.account_name },
          })),
        })),
        next_after: more ? (page.at(-1)?.id ?? null) : null,
      };
    },
  };
}
