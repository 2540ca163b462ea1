/**
 * Rounds: a messenger, optionally a vehicle, and an ordered list of delivery tasks. Assigning a
 * delivery schedules it; starting and ending a round changes its vehicle's FLEET entry, written
 * through the fleet outbox in the same transaction.
 */
import { DeliveryStatus, formatTimestamp, Timestamp } from "@dos/contracts";
import { conflict, isUniqueViolation, notFound, unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { DB, Db } from "../../db/database.ts";
import type { DeliveriesPort } from "../deliveries.port.ts";
import { lockVehicles, recordFleetState } from "../fleet/fleet.repository.ts";
import { findMessenger } from "../messengers/messengers.repository.ts";
import type { PositionsService } from "../positions/positions.service.ts";
import {
  appendRoundTasks,
  clearEtas,
  deliveriesOfTasks,
  deliveriesOnRound,
  findRound,
  insertRound,
  listRoundIds,
  lockRound,
  removeRoundTasks,
  roundOfDelivery,
  roundTasks,
  setRoundTaskOrder,
  updateRound,
} from "./rounds.repository.ts";
import type { RoundStatus } from "./rounds.table.ts";
import { mediaOfTasks } from "./task-media.repository.ts";

const stamp = (date: Date | null) => (date ? formatTimestamp(date) : null);

export const TaskState = Type.Union(
  ["to_do", "started", "completed", "failed"].map((state) => Type.Literal(state)),
  { description: "to_do: not started; started: under way; completed; failed (the delivery failed at this task)." },
);

const Stamp = Type.Union([Timestamp, Type.Null()]);
/** A round as the operator API shows it, its tasks in order. */
export const Round = Type.Object(
  {
    id: Type.Integer(),
    status: Type.Union(["planned", "active", "ended"].map((status) => Type.Literal(status))),
    messenger_id: Type.Integer(),
    vehicle_id: Type.Union([Type.Integer(), Type.Null()]),
    messenger: Type.Object({ id: Type.Integer(), name: Type.String() }),
    vehicle: Type.Union([
      Type.Object({ id: Type.Integer(), external_id: Type.String(), label: Type.Union([Type.String(), Type.Null()]) }),
      Type.Null(),
    ]),
    started_at: Stamp,
    ended_at: Stamp,
    created_at: Timestamp,
    tasks: Type.Array(
      Type.Object({
        position: Type.Integer(),
        task_id: Type.Integer(),
        delivery_id: Type.Integer(),
        kind: Type.Union([Type.Literal("pickup"), Type.Literal("dropoff")]),
        delivery_status: DeliveryStatus,
        state: TaskState,
        started_at: Stamp,
        completed_at: Stamp,
        failure_reason: Type.Union([Type.String(), Type.Null()]),
        eta: Stamp,
        slot_starting_at: Timestamp,
        slot_ending_at: Timestamp,
        recipient_name: Type.String(),
        company_name: Type.Union([Type.String(), Type.Null()]),
        address: Type.String({ description: "Street, postal code and city on one line." }),
        proofs: Type.Array(
          Type.Object({
            media_id: Type.String({ description: "The image: `GET /ops/v1/media/{media_id}`." }),
            kind: Type.Union([Type.Literal("signature"), Type.Literal("picture")]),
            content_type: Type.Union([Type.Literal("image/jpeg"), Type.Literal("image/png")]),
          }),
          { description: "The task's proof images, oldest first (11 at most)." },
        ),
      }),
    ),
  },
  { title: "Round" },
);

/** How far a task went, as the dispatch board writes it too. */
export function taskState(task: { started_at: Date | null; completed_at: Date | null; failure_reason: string | null }) {
  if (task.completed_at) return task.failure_reason !== null ? "failed" : "completed";
  return task.started_at ? "started" : "to_do";
}

export async function roundView(db: Db, id: number): Promise<Static<typeof Round>> {
  const round = await findRound(db, id);
  if (!round) throw notFound(`round ${id}`);
  const tasks = await roundTasks(db, id);
  const proofs = Map.groupBy(
    await mediaOfTasks(
      db,
      tasks.map((t) => t.task_id),
    ),
    (media) => media.task_id,
  );
  return {
    id: round.id,
    status: round.status,
    messenger_id: round.messenger_id,
    vehicle_id: round.vehicle_id,
    messenger: { id: round.messenger_id, name: round.messenger_name },
    vehicle:
      round.vehicle_id === null
        ? null
        : { id: round.vehicle_id, external_id: round.vehicle_external_id as string, label: round.vehicle_label },
    started_at: stamp(round.started_at),
    ended_at: stamp(round.ended_at),
    created_at: formatTimestamp(round.created_at),
    tasks: tasks.map((t) => ({
      position: t.position,
      task_id: t.task_id,
      delivery_id: t.delivery_id,
      kind: t.kind,
      delivery_status: t.status,
      state: taskState(t),
      started_at: stamp(t.started_at),
      completed_at: stamp(t.completed_at),
      failure_reason: t.failure_reason,
      eta: stamp(t.eta),
      slot_starting_at: formatTimestamp(t.slot_starting_at),
      slot_ending_at: formatTimestamp(t.slot_ending_at),
      recipient_name: t.recipient_name,
      company_name: t.company_name,
      address: `${t.address}, ${t.postal_code} ${t.city}`,
      proofs: (proofs.get(t.task_id) ?? []).map((m) => ({
        media_id: m.id,
        kind: m.kind,
        content_type: m.content_type,
      })),
    })),
  };
}
export type RoundView = Awaited<ReturnType<typeof roundView>>;

export interface NewRound {
  messenger_id: number;
  vehicle_id?: number | null;
  delivery_ids?: number[];
  simulated?: boolean;
}

export interface RoundsServiceDeps {
  db: Kysely<DB>;
  deliveries: DeliveriesPort;
  /** A reordered active round's next stop gets its ETA at once. */
  positions: PositionsService;
}

/** Rounds listed at most (newest first). */
const LIST_LIMIT = 500;
/** The most deliveries one round holds (docs/spec-decisions.md, "Bounded work per request"). */
export const ROUND_MAX_DELIVERIES = 500;
/** Refusals named in one answer at most. */
const MAX_NAMED = 20;

type RoundTask = Awaited<ReturnType<typeof roundTasks>>[number];
const taskLabel = (t: { task_id: number; kind: string; delivery_id: number }) =>
  `task ${t.task_id} (${t.kind} of delivery ${t.delivery_id})`;
const ordinal = (n: number) => {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
};
/** The task the messenger goes to next: the first, in order, not completed, of a delivery under way. */
const nextOf = (tasks: RoundTask[]) =>
  tasks.find((t) => !t.completed_at && (t.status === "scheduled" || t.status === "picked_up"));

export function createRoundsService({ db, deliveries, positions }: RoundsServiceDeps) {
  async function requireRound(trx: Db, id: number) {
    const round = await lockRound(trx, id);
    if (!round) throw notFound(`round ${id}`);
    return round;
  }

  /** Schedules a saved delivery and appends its tasks (pickup first) to the round. */
  async function assign(trx: Db, roundId: number, deliveryId: number) {
    const delivery = await deliveries.lock(trx, deliveryId);
    const current = await roundOfDelivery(trx, deliveryId);
    if (current) throw unprocessable(`delivery ${deliveryId} is already in round ${current.round_id}`);
    if ((await deliveriesOnRound(trx, roundId)) >= ROUND_MAX_DELIVERIES) {
      throw unprocessable(`round ${roundId} holds ${ROUND_MAX_DELIVERIES} deliveries, the most a round takes`);
    }
    await delivery.changeStatus({ status: "scheduled" });
    const order = ["pickup", "dropoff"];
    const tasks = [...delivery.tasks].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
    await appendRoundTasks(
      trx,
      roundId,
      tasks.map((t) => t.id),
    );
  }

  return {
    async create(body: NewRound): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const messenger = await findMessenger(trx, body.messenger_id);
        if (!messenger) throw unprocessable(`messenger_id ${body.messenger_id} is not a messenger`);
        if (body.vehicle_id != null && (await lockVehicles(trx, [body.vehicle_id])).length === 0) {
          throw unprocessable(`vehicle_id ${body.vehicle_id} is not a vehicle`);
        }
        const roundId = await insertRound(trx, {
          messenger_id: body.messenger_id,
          vehicle_id: body.vehicle_id ?? null,
          simulated: body.simulated,
        });
        for (const deliveryId of new Set(body.delivery_ids ?? [])) await assign(trx, roundId, deliveryId);
        return roundView(trx, roundId);
      });
    },

    async list(status: RoundStatus | undefined) {
      const ids = await listRoundIds(db, status, LIST_LIMIT);
      return Promise.all(ids.map((id) => roundView(db, id)));
    },

    get: (id: number) => roundView(db, id),

    async addDelivery(roundId: number, deliveryId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const round = await requireRound(trx, roundId);
        if (round.status === "ended") throw unprocessable(`round ${roundId} has ended; deliveries cannot be added`);
        await assign(trx, roundId, deliveryId);
        return roundView(trx, roundId);
      });
    },

    /** Takes a delivery none of whose tasks started out of the round: it is saved again. */
    async removeDelivery(roundId: number, deliveryId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        await requireRound(trx, roundId);
        const delivery = await deliveries.lock(trx, deliveryId);
        const current = await roundOfDelivery(trx, deliveryId);
        if (current?.round_id !== roundId) throw notFound(`delivery ${deliveryId} in round ${roundId}`);
        if (delivery.tasks.some((t) => t.started_at)) {
          throw unprocessable(`delivery ${deliveryId} cannot leave round ${roundId}: a task of it has started`);
        }
        await removeRoundTasks(
          trx,
          delivery.tasks.map((t) => t.id),
        );
        await delivery.changeStatus({ status: "saved" });
        return roundView(trx, roundId);
      });
    },

    /**
     * Puts the round's tasks in the order given: every task of the round, once, each pickup before
     * its delivery's dropoff. An ended round's order is final (409); in an active round every task
     * that started keeps its place (409). Whatever the order, the messenger's next stop gets its
     * ETA anew, and a stop that is no longer next forgets the one it had.
     */
    async reorder(roundId: number, taskIds: number[]): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const round = await requireRound(trx, roundId);
        if (round.status === "ended") throw conflict(`round ${roundId} has ended; its order is final`);
        const current = await roundTasks(trx, roundId);
        const given = new Set<number>();
        const twice = new Set<number>();
        for (const id of taskIds) (given.has(id) ? twice : given).add(id);
        if (twice.size > 0) {
          throw unprocessable([...twice].slice(0, MAX_NAMED).map((id) => `task_ids lists task ${id} more than once`));
        }
        const onRound = new Map(current.map((t) => [t.task_id, t]));
        const strangers = taskIds.filter((id) => !onRound.has(id)).slice(0, MAX_NAMED);
        if (strangers.length > 0) {
          const known = new Map((await deliveriesOfTasks(trx, strangers)).map((t) => [t.id, t]));
          throw unprocessable(
            strangers.map((id) => {
              const task = known.get(id);
              const named = task
                ? taskLabel({ task_id: id, kind: task.kind, delivery_id: task.delivery_id })
                : `task ${id}`;
              return `task_ids: ${named} is not on round ${roundId}`;
            }),
          );
        }
        const missing = current.filter((t) => !given.has(t.task_id));
        if (missing.length > 0) {
          throw unprocessable(
            `task_ids must list every task of round ${roundId}; missing: ${missing
              .slice(0, MAX_NAMED)
              .map(taskLabel)
              .join(", ")}${missing.length > MAX_NAMED ? ` and ${missing.length - MAX_NAMED} more` : ""}`,
          );
        }
        const place = new Map(taskIds.map((id, i) => [id, i]));
        const pickups = new Map(current.filter((t) => t.kind === "pickup").map((t) => [t.delivery_id, t]));
        const misplaced = current
          .filter((t) => {
            const pickup = t.kind === "dropoff" ? pickups.get(t.delivery_id) : undefined;
            return pickup !== undefined && (place.get(t.task_id) ?? 0) < (place.get(pickup.task_id) ?? 0);
          })
          .slice(0, MAX_NAMED)
          .map(
            (dropoff) =>
              `task_ids: ${taskLabel(dropoff)} cannot come before task ${pickups.get(dropoff.delivery_id)?.task_id}, its pickup`,
          );
        if (misplaced.length > 0) throw unprocessable(misplaced);
        for (const [i, task] of current.entries()) {
          if (task.started_at && taskIds[i] !== task.task_id) {
            throw conflict(
              `${taskLabel(task)} has started in round ${roundId}: it keeps its place, the ${ordinal(i + 1)}`,
            );
          }
        }
        await setRoundTaskOrder(trx, roundId, taskIds);
        if (round.status === "active") {
          const reordered = await roundTasks(trx, roundId);
          const before = nextOf(current);
          const after = nextOf(reordered);
          if (before && before.task_id !== after?.task_id) {
            if (!before.started_at) await clearEtas(trx, [before.task_id]);
            await positions.refreshEta(trx, roundId, { force: true });
          }
        }
        return roundView(trx, roundId);
      });
    },

    async start(roundId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const round = await requireRound(trx, roundId);
        if (round.status !== "planned")
          throw unprocessable(`round ${roundId} is ${round.status}; only a planned round starts`);
        if (round.vehicle_id !== null) await lockVehicles(trx, [round.vehicle_id]);
        try {
          await updateRound(trx, roundId, { status: "active", started_at: new Date() });
        } catch (error) {
          if (isUniqueViolation(error, "rounds_one_active_per_vehicle")) {
            throw unprocessable(`vehicle ${round.vehicle_id} is already in an active round`);
          }
          if (isUniqueViolation(error, "rounds_one_active_per_messenger")) {
            throw unprocessable(`messenger ${round.messenger_id} is already in an active round`);
          }
          throw error;
        }
        if (round.vehicle_id !== null) await recordFleetState(trx, [round.vehicle_id]);
        return roundView(trx, roundId);
      });
    },

    /**
     * Ends an active round. Refused while goods are on board or a task is under way; deliveries
     * whose tasks never started leave the round and are saved again, for another round.
     */
    async end(roundId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const round = await requireRound(trx, roundId);
        if (round.status !== "active")
          throw unprocessable(`round ${roundId} is ${round.status}; only an active round ends`);
        const tasks = await roundTasks(trx, roundId);
        const open = tasks.filter((t) => t.status === "scheduled" || t.status === "picked_up");
        const busy = open.find((t) => t.status === "picked_up" || (t.started_at && !t.completed_at));
        if (busy) {
          throw unprocessable(
            `round ${roundId} cannot end: delivery ${busy.delivery_id} is ${busy.status} and under way`,
          );
        }
        for (const deliveryId of new Set(open.map((t) => t.delivery_id))) {
          const delivery = await deliveries.lock(trx, deliveryId);
          await removeRoundTasks(
            trx,
            delivery.tasks.map((t) => t.id),
          );
          await delivery.changeStatus({ status: "saved" });
        }
        if (round.vehicle_id !== null) await lockVehicles(trx, [round.vehicle_id]);
        await updateRound(trx, roundId, { status: "ended", ended_at: new Date() });
        if (round.vehicle_id !== null) await recordFleetState(trx, [round.vehicle_id]);
        return roundView(trx, roundId);
      });
    },
  };
}
export type RoundsService = ReturnType<typeof createRoundsService>;
